package skips

import (
	"bytes"
	"testing"
)

func TestSummary(t *testing.T) {
	var before bytes.Buffer
	Summary(&before)
	if before.Len() != 0 {
		t.Fatalf("nothing skipped yet, summary %q", before.String())
	}
	t.Run("a", func(t *testing.T) { Skip(t, "needs root") })
	t.Run("b", func(t *testing.T) { Skipf(t, "needs %s", "root") })
	t.Run("c", func(t *testing.T) { Skip(t, "no cgroup v2") })
	var out bytes.Buffer
	Summary(&out)
	want := "skipped 3 tests (go test -v names each):\n  2: needs root (TestSummary/a, TestSummary/b)\n  1: no cgroup v2 (TestSummary/c)\n"
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The man pages' left footer leaves room for the date man centres on
// an 80-column line, and keeps what identifies the build.
func TestManSource(t *testing.T) {
	for v, want := range map[string]string{
		"1.4.0":                               "reaper 1.4.0",
		"(devel)":                             "reaper (devel)",
		"devel-4d8f513abcde-dirty":            "reaper devel-4d8f513abcde-dirty",
		"0.0.0~git20261126110605.214.4d8f513": "reaper 4d8f513 (snapshot)",
		"0.0.0~git20261126110605.214.4d8f513.dirty":               "reaper 4d8f513.dirty (snapshot)",
		"v1.2.3-0.20261126110605-4d8f513abcde+incompatible.extra": "reaper v1.2.3-0.202611261106...",
	} {
		got := ManSource(v)
		if got != want {
			t.Errorf("ManSource(%q) = %q, want %q", v, got, want)
		}
		if len(got) > 31 {
			t.Errorf("ManSource(%q) = %q: %d characters would run into the date", v, got, len(got))
		}
	}
}

// A flag's value name is written as a placeholder, not as a quoted
// default to type; a real default keeps its quotes (the control).
func TestTidyManPagePlaceholder(t *testing.T) {
	page := filepath.Join(t.TempDir(), "reaper-reap.1")
	os.WriteFile(page, []byte(".TP\n\\fB--lock-file\\fP=\"FILE\"\n.TP\n\\fB--color\\fP=\"auto\"\n"), 0o644)
	if err := TidyManPage(page); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(page)
	if !strings.Contains(string(b), "\\fB--lock-file\\fP=\\fIFILE\\fP\n") || !strings.Contains(string(b), "\\fB--color\\fP=\"auto\"\n") {
		t.Errorf("tidied:\n%s", b)
	}
}

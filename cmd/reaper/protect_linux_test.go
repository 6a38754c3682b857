package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// A tree [[protect]] keeps out of reach is the operator's decision: its
// outcome is "protected", the reap exits 0, its metrics count it apart
// from refusals, and --quiet says nothing of it. In the same run an
// unprotected tree the same rule matches is killed. The control: the same
// trees with no [[protect]] entry are both killed.
func TestProtectedIsNotARefusal(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "protect-" + clitest.Mark
	policy := func(protect bool) string {
		text := fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n",
			clitest.SelfSubreaper(t), regexp.QuoteMeta(mark))
		if protect {
			text += fmt.Sprintf("[[protect]]\nname = \"keep-me\"\ncmdline = '^keep-%s'\n", regexp.QuoteMeta(mark))
		}
		return clitest.WritePolicy(t, text)
	}
	for _, protect := range []bool{false, true} {
		t.Run(map[bool]string{false: "control: no [[protect]]", true: "protected"}[protect], func(t *testing.T) {
			kept := adopt(t, "npm exec mcp-remote https://"+mark, fmt.Sprintf("(exec -a keep-%s sleep 600) & wait", mark), nil)
			keptChild := childWith(t, kept, "keep-"+mark, "the protected child")
			plain := adopt(t, "npm exec mcp-remote https://plain-"+mark, "sleep 600; exit 0", nil)
			t.Cleanup(func() {
				for _, pid := range []int{kept, keptChild, plain} {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			prom := filepath.Join(t.TempDir(), "reaper.prom")
			rep, r := clitest.ReapJSON(t, "--policy", policy(protect), "--metrics", prom, "--journal", "off")
			f := rep.Finding(kept)
			switch {
			case r.Code != 0:
				t.Errorf("exit %d, want 0\n%s", r.Code, r.Stderr)
			case f == nil:
				t.Fatalf("no finding for the tree %d", kept)
			case protect && (f.Outcome != "protected" || !strings.Contains(f.Detail, `protected by "keep-me"`) || !clitest.Alive(keptChild)):
				t.Errorf("protected tree: %s (%s), child alive %v; want protected, alive", f.Outcome, f.Detail, clitest.Alive(keptChild))
			case !protect && (f.Outcome != "killed" || clitest.Alive(keptChild)):
				t.Errorf("control: the tree %s, child alive %v; want killed", f.Outcome, clitest.Alive(keptChild))
			}
			if g := rep.Finding(plain); g == nil || g.Outcome != "killed" {
				t.Errorf("the unprotected tree in the same run: %+v, want killed", g)
			}
			metrics, _ := os.ReadFile(prom)
			if protect && (!strings.Contains(string(metrics), `outcome="protected"} 1`) || strings.Contains(string(metrics), `outcome="refused"}`)) {
				t.Errorf("metrics do not count the protected tree apart from refusals:\n%s", metrics)
			}
			if protect {
				q := clitest.RunReaper(t, nil, "reap", "--quiet", "--policy", policy(true), "--lock-file", filepath.Join(t.TempDir(), "lock"), "--journal", "off")
				if q.Code != 0 || strings.Contains(q.Stdout+q.Stderr, fmt.Sprint(kept)) {
					t.Errorf("--quiet on the protected tree alone: exit %d, said %q; want exit 0 and nothing", q.Code, q.Stdout+q.Stderr)
				}
			}
		})
	}
}

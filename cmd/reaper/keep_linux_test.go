package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// An orphaned server that asks to be kept — REAPER_KEEP=1 in its
// environment, as a daemon that detaches on purpose sets it — is left by
// reap, and explain and ps say by whose word. The control: the same tree
// without the mark, under the same policy, is killed.
func TestKeepMarkLeavesTheTree(t *testing.T) {
	clitest.BecomeSubreaper(t)
	for _, keep := range []bool{true, false} {
		t.Run(map[bool]string{true: "marked", false: "control"}[keep], func(t *testing.T) {
			url := "https://keep-" + strconv.FormatBool(keep) + "-" + clitest.Mark + ".test"
			mark := ""
			if keep {
				mark = "export REAPER_KEEP=1; "
			}
			pid := adoptShell(t, fmt.Sprintf("%sexec -a %q bash -c %q", mark, "npm exec mcp-remote "+url, "sleep 60; exit 0"), nil)
			pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n[[rule]]\nname = \"keep-test\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n",
				clitest.SelfSubreaper(t), regexp.QuoteMeta(url)))
			explain := clitest.RunReaper(t, nil, "explain", "--policy", pol, strconv.Itoa(pid))
			var ps struct {
				Orphans []struct {
					RootPID   int    `json:"root_pid"`
					Protected string `json:"protected"`
				} `json:"orphans"`
			}
			if r := clitest.RunReaper(t, nil, "ps", "--output", "json", "--policy", pol); json.Unmarshal([]byte(r.Stdout), &ps) != nil {
				t.Fatalf("ps: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			psSays := ""
			for _, o := range ps.Orphans {
				if o.RootPID == pid {
					psSays = o.Protected
				}
			}
			r := clitest.RunReaper(t, nil, "reap", "--output", "json", "--journal", "off", "--policy", pol, "--lock-file", filepath.Join(t.TempDir(), "reaper.lock"))
			var rep clitest.ReapReport
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("reap: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
			}
			f := rep.Finding(pid)
			if f == nil {
				t.Fatalf("no finding for pid %d:\n%s", pid, r.Stdout)
			}
			word := fmt.Sprintf("kept by its own word: pid %d", pid)
			switch {
			case keep && (f.Outcome != "protected" || !strings.Contains(f.Detail, word) || !clitest.Alive(pid)):
				t.Errorf("marked: %s %q, alive %v; want protected %q and alive", f.Outcome, f.Detail, clitest.Alive(pid), word)
			case keep && !strings.Contains(explain.Stdout, word):
				t.Errorf("explain does not say by whose word:\n%s", explain.Stdout)
			case keep && !strings.Contains(psSays, word):
				t.Errorf("ps: the orphan's protected is %q, want %q", psSays, word)
			case !keep && psSays != "":
				t.Errorf("control: ps says protected: %q", psSays)
			case !keep && (f.Outcome != "killed" || clitest.Alive(pid)):
				t.Errorf("control: %s %q, alive %v; want killed", f.Outcome, f.Detail, clitest.Alive(pid))
			case !keep && strings.Contains(explain.Stdout, "kept by its own word"):
				t.Errorf("control: explain says kept:\n%s", explain.Stdout)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// A reaper that is not root acts on its own uid's trees alone: beside
// root's orphan, which its terminate rule (no user list) matches too, a
// user's reap kills the user's own orphan, exits 0, leaves root's alone
// without a refusal or a fix it could not apply, and counts it out of its
// scope. The control: root's orphan lived through it, and dies to a reap
// of root's own.
func TestUsersReapActsOnItsOwnAlone(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "scope-" + clitest.Mark
	dir := sharedDir(t, 0o777)
	pol := filepath.Join(dir, "policy.toml")
	text := fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), regexp.QuoteMeta(mark))
	if err := os.WriteFile(pol, []byte(clitest.MarkRules(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	roots := adopt(t, "npm exec mcp-remote https://root-"+mark, "sleep 600; exit 0", nil)
	users := adopt(t, "npm exec mcp-remote https://b-"+mark, "sleep 600; exit 0", userB)
	t.Cleanup(func() { syscall.Kill(roots, syscall.SIGKILL); syscall.Kill(users, syscall.SIGKILL) })

	r := runReaperAs(t, userB, []string{"XDG_RUNTIME_DIR=" + dir, "HOME=" + dir}, "reap", "--output", "json", "--policy", pol, "--journal", "off")
	var rep struct {
		Findings []clitest.ReapFinding `json:"findings"`
		Totals   struct {
			OutOfScope int `json:"out_of_scope"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("reap as uid 65533: exit %d, %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	var mine *clitest.ReapFinding
	for i, f := range rep.Findings {
		switch f.RootPID {
		case users:
			mine = &rep.Findings[i]
		case roots:
			t.Errorf("root's tree is a finding of the user's reap: %+v", f)
		}
	}
	switch {
	case r.Code != 0:
		t.Errorf("exit %d, want 0\n%s", r.Code, r.Stderr)
	case mine == nil || mine.Outcome != "killed" || clitest.Alive(users):
		t.Errorf("the user's own orphan: %+v, alive %v; want killed", mine, clitest.Alive(users))
	case rep.Totals.OutOfScope < 1:
		t.Errorf("out_of_scope %d, want root's tree counted", rep.Totals.OutOfScope)
	case strings.Contains(r.Stdout+r.Stderr, "user list"):
		t.Errorf("the user is told to fix a user list:\n%s%s", r.Stdout, r.Stderr)
	}
	if !clitest.Alive(roots) {
		t.Fatal("control: root's orphan died to a user's reap")
	}
	if rep, r := clitest.ReapJSON(t, "--policy", pol, "--journal", "off"); r.Code != 0 || rep.Finding(roots) == nil || clitest.Alive(roots) {
		t.Errorf("control, root's reap: exit %d, root's orphan alive %v\n%s", r.Code, clitest.Alive(roots), r.Stderr)
	}
}

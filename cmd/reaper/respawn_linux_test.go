package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/clitest"
)

// respawner starts a supervisor titled name that runs `sleep 300` titled
// child in a loop — starting it again as soon as it ends — and returns
// the supervisor's pid; it ends with the test.
func respawner(t *testing.T, name, child string) int {
	t.Helper()
	c := exec.Command("bash", "-c", fmt.Sprintf(`exec -a %q bash -c 'while :; do (exec -a %q sleep 300); sleep 0.05; done'`, name, child))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clitest.KillTreeVerified(c.Process.Pid); c.Wait() })
	return c.Process.Pid
}

// childOf waits for a live child of parent other than not, and returns it.
func childOf(t *testing.T, parent, not int) int {
	t.Helper()
	var got int
	clitest.WaitFor(t, func() bool {
		for _, c := range clitest.ChildrenOf(parent) {
			if c != not && clitest.Alive(c) && strings.HasPrefix(clitest.CmdlineOf(c), "respawn") {
				got = c
				return true
			}
		}
		return false
	}, fmt.Sprintf("a child of %d", parent))
	return got
}

// A kill loop cannot be made with reaper: a supervisor (a [[subreaper]]
// of the policy's, whose children count as left to it) that starts its
// child again as soon as reaper ends it gets it ended three times, and
// then left alone — refused, the supervisor named and its restart
// advised, exit 3 — however often reaper runs (issue 42). The control: a
// second supervisor's child of the same command is another parent's, and
// is ended.
func TestKillLoopStops(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "respawn" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pol := clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"
%s
[[subreaper]]
cmdline = '^%s-sup'

[[rule]]
name = "loop"
when = ["reparented"]
cmdline = '^%s-child'
action = "terminate"
`, clitest.SelfSubreaper(t), mark, mark))
	lock := filepath.Join(t.TempDir(), "reaper.lock")
	reap := func() (*clitest.ReapReport, clitest.Result) {
		r := clitest.RunReaper(t, nil, "reap", "--output", "json", "--journal", "off", "--lock-file", lock, "--policy", pol)
		var rep clitest.ReapReport
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("reap: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
		}
		return &rep, r
	}
	sup := respawner(t, mark+"-sup", mark+"-child")
	child := 0
	for cycle := 1; cycle <= 3; cycle++ {
		child = childOf(t, sup, child)
		rep, r := reap()
		if f := rep.Finding(child); f == nil || f.Outcome != "killed" {
			t.Fatalf("cycle %d: the child %d: %+v, want killed\n%s", cycle, child, f, r.Stderr)
		}
	}
	child = childOf(t, sup, child)
	rep, r := reap()
	f := rep.Finding(child)
	if f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "kill loop") || !strings.Contains(f.Detail, fmt.Sprintf("restart pid %d", sup)) {
		t.Fatalf("the fourth copy: %+v, want refused as a kill loop naming pid %d", f, sup)
	}
	if !clitest.Alive(child) || r.Code != audit.ExitPartial {
		t.Errorf("the fourth copy: alive %v, exit %d; want alive, exit 3", clitest.Alive(child), r.Code)
	}
	t.Logf("after 3 kills: %s", f.Detail)
	if rep, _ := reap(); rep.Finding(child) == nil || rep.Finding(child).Outcome != "refused" || !clitest.Alive(child) {
		t.Errorf("the next run acted on it: %+v", rep.Finding(child))
	}

	// The control: the same command under another supervisor is ended.
	other := respawner(t, mark+"-sup2", mark+"-child")
	second := childOf(t, other, 0)
	rep, _ = reap()
	if f := rep.Finding(second); f == nil || f.Outcome != "killed" {
		t.Errorf("control: another supervisor's child %d: %+v, want killed", second, f)
	}
}

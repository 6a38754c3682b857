package reap

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
)

// cgroupOf is pid's cgroup v2 path.
func cgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	return platform.ParseCgroup(b).Unified
}

// notStopped fails the test for a process of pids left stopped.
func notStopped(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		if strings.Contains(string(b), ") T ") || strings.Contains(string(b), ") t ") {
			t.Errorf("pid %d left stopped", pid)
		}
	}
}

// An interrupt that comes while the tree is being stopped: what was
// stopped is continued, no SIGTERM goes out, the finding is failed.
func TestInterruptBeforeTerm(t *testing.T) {
	cmd := startTree(t, "sleep 60 & sleep 60 & wait", true)
	waitMembers(t, cmd.Process.Pid, 3)
	pids := treeOf(t, cmd.Process.Pid)
	plan, s := planFor(t, cmd.Process.Pid, policy.Terminate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	opt := options(rec)
	opt.send = func(h *kill.Handle, sig syscall.Signal) error {
		err := h.Signal(sig)
		if sig == syscall.SIGSTOP {
			cancel() // Ctrl-C, as the first member stops
		}
		return err
	}
	res := Execute(ctx, plan, s, opt)
	if res[0].Outcome != policy.Interrupted || !strings.Contains(res[0].Detail, "interrupted before SIGTERM") {
		t.Fatalf("outcome %s (%s), want interrupted: interrupted before SIGTERM", res[0].Outcome, res[0].Detail)
	}
	if n := rec.signals("SIGTERM"); n != 0 {
		t.Errorf("%d SIGTERM after the interrupt", n)
	}
	if rec.signals("SIGCONT") < rec.signals("SIGSTOP") {
		t.Errorf("%d SIGSTOP, %d SIGCONT: not every stopped process was continued", rec.signals("SIGSTOP"), rec.signals("SIGCONT"))
	}
	notStopped(t, pids)
	stillAlive(t, pids)
}

// An interrupt during grace, in a confinement: the tree is moved back to
// the cgroup it came from, the confinement is removed, and nothing is
// stopped.
func TestInterruptDuringGraceReleasesConfinement(t *testing.T) {
	if !canConfine() {
		skips.Skip(t, "needs root and a writable cgroup v2 with cgroup.kill (CI has them)")
	}
	cmd := startTree(t, "trap '' TERM; sleep 60 & wait", true)
	waitMembers(t, cmd.Process.Pid, 2)
	pids := treeOf(t, cmd.Process.Pid)
	before := cgroupOf(t, cmd.Process.Pid)
	plan, s := planFor(t, cmd.Process.Pid, policy.Terminate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt := options(&recorder{})
	opt.Grace = 30 * time.Second
	var confined string
	opt.send = func(h *kill.Handle, sig syscall.Signal) error {
		err := h.Signal(sig)
		if sig == syscall.SIGTERM && confined == "" {
			confined = cgroupOf(t, h.PID)
			cancel()
		}
		return err
	}
	start := time.Now()
	res := Execute(ctx, plan, s, opt)
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v after the interrupt, grace is 30s", time.Since(start))
	}
	if res[0].Outcome != policy.Interrupted || !strings.Contains(res[0].Detail, "interrupted during grace") {
		t.Fatalf("outcome %s (%s), want interrupted: interrupted during grace", res[0].Outcome, res[0].Detail)
	}
	if confined == before || !strings.Contains(confined, "/reaper-") {
		t.Fatalf("control: the tree was in %q at SIGTERM, not in a confinement (it came from %q)", confined, before)
	}
	for _, pid := range pids {
		if got := cgroupOf(t, pid); got != before {
			t.Errorf("pid %d is in %s after the interrupt, want %s", pid, got, before)
		}
	}
	if _, err := os.Stat(kill.Cgroup2Root() + confined); err == nil {
		t.Errorf("confinement %s left behind", confined)
	}
	notStopped(t, pids)
	stillAlive(t, pids)
}

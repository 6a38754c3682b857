package watch

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

func start(t *testing.T) Target {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	p, err := platform.ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return Target{PID: p.PID, StartTicks: p.StartTicks}
}

// An exit of a watched process is told at once; a live one is not (the
// control); a target whose pid is another process now is told at once
// (what it left is due a look); a target dropped from the set is no
// longer watched.
func TestExits(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	defer e.Close()
	a, b, c := start(t), start(t), start(t)
	reused := Target{PID: c.PID, StartTicks: c.StartTicks + 1}
	if failed := e.Set([]Target{a, b, reused}); failed != 0 || e.Len() != 2 {
		t.Fatalf("Set: %d failed, %d watched; want 0 and 2", failed, e.Len())
	}
	if got := <-e.C(); got.PID != c.PID {
		t.Errorf("the reused pid: told %d, want %d at once", got.PID, c.PID)
	}
	select {
	case got := <-e.C():
		t.Fatalf("told %d while every watched process lives", got.PID)
	case <-time.After(200 * time.Millisecond):
	}
	e.Set([]Target{a}) // b is dropped
	syscall.Kill(b.PID, syscall.SIGKILL)
	syscall.Kill(a.PID, syscall.SIGKILL)
	select {
	case got := <-e.C():
		if got.PID != a.PID {
			t.Errorf("told %d, want %d (b was dropped)", got.PID, a.PID)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the exit of a watched process was not told")
	}
	if e.Len() != 0 {
		t.Errorf("%d still watched after the exit", e.Len())
	}
}

package watch

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// An owner that exits while the pass that leaves it out runs is told all
// the same: the pass read its table before the exit, so what the owner
// left is not in it, and the exit's event may not have been read when
// the new set drops its pidfd (the real Claude Code's servers outlived it
// in TestRealWatchNewClaudeSession so: its claude was killed during the
// pass its session file's rewrite started). The reading goroutine is held
// off by the lock meanwhile, as it was then by chance. The control: a
// target dropped alive is not told.
func TestExitsDroppedAfterExit(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	defer e.Close()
	dead, alive := start(t), start(t)
	if failed := e.Set([]Target{dead, alive}); failed != 0 {
		t.Fatalf("Set: %d failed", failed)
	}
	e.mu.Lock()
	syscall.Kill(dead.PID, syscall.SIGKILL)
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, dead.PID, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		e.mu.Unlock()
		t.Fatal(err)
	}
	e.set(nil)
	e.mu.Unlock()
	select {
	case got := <-e.C():
		if got != dead {
			t.Errorf("told %+v, want the dead %+v", got, dead)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the exit of a target dropped after it exited was lost")
	}
	select {
	case got := <-e.C():
		t.Errorf("told %+v: the live one dropped, or the dead one twice", got)
	case <-time.After(200 * time.Millisecond):
	}
}

// A process whose leader has exited while another of its threads runs
// shows as a zombie, but has not exited: its children are reparented only
// when its last thread ends, which its pidfd tells. A pass takes it for
// gone and leaves it out of the next set; it stays watched until then,
// and its exit is told. (The real Claude Code, SIGKILLed, is such a
// process for a few hundred milliseconds: dropped then, its exit was
// never told and its servers outlived it until the backstop.) The
// control: dropped while its thread still runs, it is not told.
func TestExitsDyingLeader(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("needs /usr/bin/python3, to end a process's leader thread alone")
	}
	e, err := New()
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	defer e.Close()
	target := dyingProcess(t, 0)
	if failed := e.Set([]Target{target}); failed != 0 || e.Len() != 1 {
		t.Fatalf("Set of a dying process: %d failed, %d watched; want it watched", failed, e.Len())
	}
	e.Set(nil) // the pass took it for gone
	select {
	case got := <-e.C():
		t.Fatalf("told %+v while its thread runs", got)
	case <-time.After(200 * time.Millisecond):
	}
	if e.Len() != 1 {
		t.Fatalf("%d watched after a set without it, want the dying one kept", e.Len())
	}
	syscall.Kill(target.PID, syscall.SIGKILL)
	select {
	case got := <-e.C():
		if got != target {
			t.Errorf("told %+v, want %+v", got, target)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the exit of a process dropped while dying was not told")
	}
}

// dyingProcess starts a python whose leader thread exits alone — it calls
// exit(2) itself, not exit_group: its other thread, asleep for a minute,
// keeps the process — and waits for its leader to be a zombie. uid is the
// target's label (whose budget it counts against), not its owner.
func dyingProcess(t *testing.T, uid uint32) Target {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "-c", fmt.Sprintf("import threading, time, ctypes\nthreading.Thread(target=lambda: time.sleep(60)).start()\nprint('ready', flush=True)\nctypes.CDLL(None).syscall(%d, 0)", unix.SYS_EXIT))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	p, err := platform.ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	target := Target{PID: p.PID, StartTicks: p.StartTicks, UID: uid}
	deadline := time.Now().Add(20 * time.Second)
	for !dying(target) {
		if time.Now().After(deadline) {
			t.Fatal("the leader did not become a zombie alone")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return target
}

// One user's dying processes never push another's out: of 20 of A's
// dying targets, a set that leaves them all out keeps A's share
// (maxDyingPerUID) and B's two whole. The control: A's 20 alone are
// bounded at the share (the check can tell a bound from none).
func TestExitsDyingPerUID(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3, to end a process's leader thread alone")
	}
	e, err := New()
	if err != nil {
		t.Skipf("no pidfds here: %v", err)
	}
	defer e.Close()
	var a, b []Target
	for range maxDyingPerUID + 4 {
		a = append(a, dyingProcess(t, 1001))
	}
	for range 2 {
		b = append(b, dyingProcess(t, 1002))
	}
	if failed := e.Set(a); failed != 0 {
		t.Fatalf("%d failed", failed)
	}
	e.Set(nil)
	if e.Len() != maxDyingPerUID {
		t.Fatalf("control: A's %d dying alone: %d kept, want the share, %d", len(a), e.Len(), maxDyingPerUID)
	}
	e.Set(append(append([]Target{}, a...), b...))
	e.Set(nil)
	kept := map[uint32]int{}
	e.mu.Lock()
	for t := range e.fds {
		kept[t.UID]++
	}
	e.mu.Unlock()
	if kept[1001] != maxDyingPerUID || kept[1002] != 2 {
		t.Errorf("kept %v, want A's share (%d) and B's 2", kept, maxDyingPerUID)
	}
}

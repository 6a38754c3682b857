package host

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// state is the state letter of pid's /proc/PID/stat, "" once it is gone.
func state(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return after[:1]
}

// until polls cond for up to a minute.
func until(cond func() bool) bool {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// TestRunInitLeavesOwnChildren: while RunInit reaps every exited child of
// this process, a child started with StartOwn is left to its own waiter —
// its status whole, not ECHILD — even once it is a zombie beside another
// exited child, which RunInit reaps (at the latest when OwnDone says the
// own child was waited for). Control: a child started without StartOwn
// loses its status to RunInit.
func TestRunInitLeavesOwnChildren(t *testing.T) {
	sleepBin, err1 := exec.LookPath("sleep")
	falseBin, err2 := exec.LookPath("false")
	if err1 != nil || err2 != nil {
		t.Skip("no sleep(1) or false(1)")
	}
	start := func() (*os.Process, error) {
		return os.StartProcess(falseBin, []string{"false"}, &os.ProcAttr{})
	}
	for _, own := range []bool{true, false} {
		var reaped atomic.Int32
		errs := make(chan error, 1)
		check := func() error {
			if !own {
				p, err := start()
				if err != nil {
					return err
				}
				if !until(func() bool { return state(p.Pid) == "" }) {
					return fmt.Errorf("control: child %d never reaped by RunInit", p.Pid)
				}
				if st, err := p.Wait(); err == nil {
					return fmt.Errorf("control: a child not started with StartOwn kept its status (%v): want it taken by RunInit", st)
				}
				return nil
			}
			var a *os.Process
			if _, err := StartOwn(func() (int, error) {
				p, err := start()
				if err != nil {
					return 0, err
				}
				a = p
				return p.Pid, nil
			}); err != nil {
				return err
			}
			if !until(func() bool { return state(a.Pid) == "Z" }) {
				return fmt.Errorf("own child %d: not a zombie (%q)", a.Pid, state(a.Pid))
			}
			b, err := start()
			if err != nil {
				return err
			}
			if !until(func() bool { s := state(b.Pid); return s == "Z" || s == "" }) {
				return fmt.Errorf("child %d never exited", b.Pid)
			}
			st, err := a.Wait()
			OwnDone(a.Pid)
			if err != nil || st.ExitCode() != 1 {
				return fmt.Errorf("an own child's status: %v, %v; want exit status 1 from its own wait", st, err)
			}
			if !until(func() bool { return state(b.Pid) == "" && reaped.Load() == 1 }) {
				return fmt.Errorf("the other child %d: %q, reaped %d; want it reaped by RunInit", b.Pid, state(b.Pid), reaped.Load())
			}
			return nil
		}
		code, err := RunInit([]string{sleepBin, "600"}, Init{Reaped: func(int) { reaped.Add(1) }}, func(pid int) {
			go func() {
				errs <- check()
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}()
		})
		if err != nil || code != 128+9 {
			t.Fatalf("own=%v: RunInit: %d, %v; want 137 (its sleep killed)", own, code, err)
		}
		if err := <-errs; err != nil {
			t.Errorf("own=%v: %v", own, err)
		}
	}
}

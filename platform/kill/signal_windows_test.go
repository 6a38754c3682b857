package kill_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
)

// envSleeper makes this test binary, run again, a process that sleeps:
// the tests' own, started and ended by them.
const envSleeper = "REAPER_KILLTEST_SLEEP"

func TestMain(m *testing.M) {
	if os.Getenv(envSleeper) != "" {
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sleeper starts a process of the test's own, ended when the test ends,
// and returns its target as the scan would see it.
func sleeper(t *testing.T) (kill.Target, *exec.Cmd) {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run", "^$")
	c.Env = append(os.Environ(), envSleeper+"=1")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	id, err := platform.StartIdentity(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	us, err := platform.ParseDarwinIdentity(id)
	if err != nil {
		t.Fatal(err)
	}
	return kill.Target{PID: c.Process.Pid, StartTicks: us}, c
}

// A handle is opened only on the process the scan saw: a creation time
// off by a microsecond is refused.
func TestWindowsOpenChecksIdentity(t *testing.T) {
	tg, _ := sleeper(t)
	wrong := tg
	wrong.StartTicks++
	if _, err := kill.Open(wrong, kill.NewGuard(nil)); !errors.Is(err, kill.ErrIdentity) {
		t.Fatalf("open with the wrong creation time: %v, want ErrIdentity", err)
	}
	h, err := kill.Open(tg, kill.NewGuard(nil))
	if err != nil {
		t.Fatalf("control: open with the right one: %v", err)
	}
	h.Close()
}

// Stop suspends, Continue resumes (a frozen process is never left
// frozen), Kill ends and WaitGone confirms it; the control: before Kill,
// the process outlives the wait.
func TestWindowsStopContinueKill(t *testing.T) {
	tg, c := sleeper(t)
	h, err := kill.Open(tg, kill.NewGuard(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Signal(kill.Stop); err != nil || h.State() != "T" {
		t.Fatalf("Stop: %v, state %q", err, h.State())
	}
	if err := h.Signal(kill.Continue); err != nil || h.State() != "R" {
		t.Fatalf("Continue: %v, state %q", err, h.State())
	}
	if h.WaitGone(200 * time.Millisecond) {
		t.Fatal("control: the process is gone before it was ended")
	}
	if err := h.Signal(kill.Kill); err != nil {
		t.Fatal(err)
	}
	if !h.WaitGone(10 * time.Second) {
		t.Fatal("the process lives 10 s after Kill")
	}
	if err := h.Signal(kill.Term); !errors.Is(err, kill.ErrGone) {
		t.Errorf("a signal to the ended process: %v, want ErrGone", err)
	}
	c.Wait()
}

// A tree put in a job of its own while suspended is ended whole by the
// job (TerminateJobObject): what a member starts is born in the job.
func TestWindowsConfinement(t *testing.T) {
	g := kill.NewGuard(nil)
	conf, err := g.Confine(fmt.Sprint(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	var hs []*kill.Handle
	for range 2 {
		tg, _ := sleeper(t)
		h, err := kill.Open(tg, g)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if err := h.Signal(kill.Stop); err != nil {
			t.Fatal(err)
		}
		if err := conf.Move(h); err != nil {
			t.Fatalf("move %d: %v", h.PID, err)
		}
		hs = append(hs, h)
	}
	if !conf.Populated() || len(conf.Procs()) != 2 || !conf.Moved(hs[0].PID) {
		t.Fatalf("the job: populated %v, procs %v, moved %v", conf.Populated(), conf.Procs(), conf.Moved(hs[0].PID))
	}
	targets, err := conf.Kill()
	if err != nil || len(targets) != 2 {
		t.Fatalf("the job's kill: %v, %v", targets, err)
	}
	for _, h := range hs {
		if !h.WaitGone(10 * time.Second) {
			t.Errorf("pid %d lives after the job's kill", h.PID)
		}
	}
	if !conf.Remove() {
		t.Error("the job is not empty after its kill")
	}
}

// On Windows the ending verbs are carried by TerminateProcess, and the
// records say so; stop and continue are not ends.
func TestWindowsEndCall(t *testing.T) {
	for sig, want := range map[kill.Signal]string{kill.Term: "TerminateProcess", kill.Kill: "TerminateProcess", kill.Interrupt: "TerminateProcess", kill.Stop: "", kill.Continue: ""} {
		if got := kill.EndCall(sig); got != want {
			t.Errorf("EndCall(%s) = %q, want %q", kill.SignalName(sig), got, want)
		}
	}
}

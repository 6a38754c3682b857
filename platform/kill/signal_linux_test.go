package kill

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
)

// child starts a sleep this test owns; cleanup kills and reaps it through
// os/exec (a pidfd since Go 1.23), so it can't hit a reused pid.
func child(t *testing.T) (*exec.Cmd, Target) {
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
	return cmd, Target{PID: cmd.Process.Pid, StartTicks: p.StartTicks}
}

func alive(pid int) bool {
	p, err := platform.ReadStat(pid)
	return err == nil && !p.Zombie()
}

func TestSeamRefusals(t *testing.T) {
	cmd, protected := child(t)
	g := NewGuard(map[int]string{protected.PID: "protected by \"test\""})
	self, err := platform.ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	type refusal struct {
		name   string
		target Target
	}
	tests := []refusal{
		{"pid 0", Target{PID: 0}},
		{"pid -1 (every process)", Target{PID: -1}},
		{"pid 1", Target{PID: 1, StartTicks: 1}},
		{"the reaper itself", Target{PID: os.Getpid(), StartTicks: self.StartTicks}},
		{"a denied (protected, owner) process", protected},
	}
	// Inside a PID namespace of its own (a container's CI) the parent may
	// be outside it (ppid 0) and no kernel thread is visible: those two
	// cases need the host's namespace.
	if parent, err := platform.ReadStat(os.Getppid()); err == nil && os.Getppid() > 0 {
		tests = append(tests, refusal{"the reaper's parent", Target{PID: os.Getppid(), StartTicks: parent.StartTicks}})
	} else {
		t.Logf("the parent is not visible in this PID namespace: its case is left out")
	}
	if host.HostPIDNamespace() {
		kthreadd, err := platform.ReadStat(2)
		if err != nil || !kthreadd.KernelThread() {
			t.Fatalf("pid 2 is not kthreadd in the host's PID namespace: %v", err)
		}
		tests = append(tests, refusal{"a kernel thread", Target{PID: 2, StartTicks: kthreadd.StartTicks}})
	} else {
		t.Logf("no kernel thread is visible in this PID namespace: its case is left out")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := Open(tt.target, g)
			if err == nil {
				defer h.Close()
				err = h.Signal(syscall.SIGKILL)
			}
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("got %v, want a refusal", err)
			}
		})
	}
	// The refusal held: the protected child got no SIGKILL.
	if !alive(cmd.Process.Pid) {
		t.Fatal("the protected child died")
	}
}

// A handle opened while the process was allowed is still checked at the
// signal: a deny added later refuses it.
func TestSeamChecksAtSignal(t *testing.T) {
	cmd, target := child(t)
	g := NewGuard(map[int]string{})
	h, err := Open(target, g)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	g.Deny[target.PID] = "became an owner"
	if err := h.Signal(syscall.SIGKILL); !errors.Is(err, ErrRefused) {
		t.Fatalf("got %v, want a refusal", err)
	}
	if !alive(cmd.Process.Pid) {
		t.Fatal("the child died")
	}
}

func TestSeamIdentity(t *testing.T) {
	cmd, target := child(t)
	target.StartTicks++ // another process with this pid, as after reuse
	if _, err := Open(target, NewGuard(nil)); !errors.Is(err, ErrIdentity) {
		t.Fatalf("got %v, want ErrIdentity", err)
	}
	if !alive(cmd.Process.Pid) {
		t.Fatal("the child died")
	}
}

func TestSeamSignalAndGone(t *testing.T) {
	cmd, target := child(t)
	h, err := Open(target, NewGuard(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if ok, _ := PidfdSupported(); ok && !h.Pidfd() {
		t.Error("pidfd supported but not used")
	}
	if err := h.Signal(0); err != nil {
		t.Fatalf("signal 0: %v", err)
	}
	if h.WaitGone(50 * time.Millisecond) {
		t.Fatal("WaitGone says gone while it runs")
	}
	if err := h.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !h.WaitGone(5 * time.Second) {
		t.Fatal("not gone after SIGTERM")
	}
	// Exited but not reaped: a zombie is gone for the reaper.
	if err := h.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, ErrGone) {
		t.Errorf("signal to the zombie: %v", err)
	}
	if _, err := Open(target, NewGuard(nil)); !errors.Is(err, ErrGone) {
		t.Errorf("Open on the zombie: %v, want ErrGone", err)
	}
	cmd.Wait()
	if err := h.Signal(syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Errorf("signal after reaping: %v, want ErrGone", err)
	}
	if _, err := Open(target, NewGuard(nil)); !errors.Is(err, ErrGone) {
		t.Errorf("Open after reaping: %v, want ErrGone", err)
	}
}

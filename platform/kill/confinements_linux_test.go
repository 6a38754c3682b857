package kill

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// Issue 51, attack 7: a confinement outlived its reap when its maker was
// SIGKILLed or its PID namespace ended, below a cgroup no one visits.
// Every confinement is now under ConfineParent, and each run removes the
// empty ones older than a few seconds: a young one (its maker may be
// about to move a process in) and one that holds a process are left, and
// doctor's Confinements names them all.
func TestSweepConfinements(t *testing.T) {
	g := NewGuard(nil)
	young, err := g.Confine("sweep-young-" + strconv.Itoa(os.Getpid()))
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no confinement here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { young.Remove() })
	if !strings.Contains(young.Path, "/"+ConfineParent+"/reaper-sweep-young-") {
		t.Errorf("confinement %s is not under %s", young.Path, ConfineParent)
	}
	busy, _ := g.Confine("sweep-busy-" + strconv.Itoa(os.Getpid()))
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait(); busy.Remove() })
	sleeper.Process.Signal(syscall.SIGSTOP)
	h, err := Open(Target{PID: sleeper.Process.Pid, StartTicks: startOf(t, sleeper.Process.Pid)}, g)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := busy.Move(h); err != nil {
		t.Fatal(err)
	}
	sleeper.Process.Signal(syscall.SIGCONT)

	if swept := sweepConfinements(time.Now(), func(name string) bool { return strings.HasPrefix(name, "reaper-sweep-") }); len(swept) != 0 {
		t.Errorf("confinements made a moment ago removed: %v", swept)
	}
	later := time.Now().Add(time.Minute)
	left, err := Confinements(later)
	if err != nil {
		t.Fatal(err)
	}
	if !listed(left, young.Path, false) || !listed(left, busy.Path, true) {
		t.Errorf("doctor's list %+v: want %s empty and %s holding a process", left, young.Path, busy.Path)
	}
	// A minute ahead, every other reap's confinement of this moment would
	// look left behind too: the sweep is of this test's own.
	mine := func(name string) bool { return strings.HasPrefix(name, "reaper-sweep-") }
	swept := sweepConfinements(later, mine)
	if len(swept) != 1 || swept[0] != young.Path {
		t.Errorf("swept %v, want the empty one alone (%s)", swept, young.Path)
	}
	if _, err := os.Stat(Cgroup2Root() + busy.Path); err != nil {
		t.Errorf("the confinement that holds a process was removed: %v", err)
	}
	if p, err := platform.ReadStat(sleeper.Process.Pid); err != nil || p.Zombie() {
		t.Errorf("the confined process was touched: %v", err)
	}
	// Its maker finds it removed harmlessly: a removed cgroup held nothing.
	if young.Populated() {
		t.Error("a removed confinement reads populated")
	}
	if covered, err := young.Kill(); err != nil || len(covered) != 0 {
		t.Errorf("kill of a removed confinement: %v, %v", covered, err)
	}
}

func listed(left []ConfinementLeft, path string, populated bool) bool {
	for _, l := range left {
		if l.Path == path {
			return l.Populated == populated
		}
	}
	return false
}

func startOf(t *testing.T, pid int) uint64 {
	t.Helper()
	p, err := platform.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return p.StartTicks
}

func TestMadeAt(t *testing.T) {
	for name, ok := range map[string]bool{"reaper-12-34-1764300000000000000": true, "reaper-doctor-9-1764300000000000000": true,
		"reaper-12-34": false, "other-1-1764300000000000000": false, "reaper-x-": false} {
		if _, got := madeAt(name); got != ok {
			t.Errorf("%s: %v, want %v", name, got, ok)
		}
	}
}

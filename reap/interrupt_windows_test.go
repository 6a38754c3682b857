package reap

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
)

// envTree makes this test binary, run again, a member of the trees the
// Windows tests start: "parent" starts two "child"ren like itself, and
// says "up" once both have; each of the three writes the time into the
// file named by its pid in envBeats' dir every 10 ms, so that a test sees
// whether it runs (a suspended process writes nothing).
const (
	envTree  = "REAPER_REAP_WINTEST"
	envBeats = "REAPER_REAP_WINTEST_BEATS"
)

func init() {
	switch os.Getenv(envTree) {
	case "parent":
		go beat()
		for range 2 {
			c := exec.Command(os.Args[0], "-test.run", "^$")
			c.Env = append(os.Environ(), envTree+"=child")
			up, err := c.StdoutPipe()
			if err == nil {
				err = c.Start()
			}
			if err == nil {
				_, err = bufio.NewReader(up).ReadString('\n')
			}
			if err != nil {
				fmt.Println("child:", err)
				os.Exit(2)
			}
		}
		fmt.Println("up")
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	case "child":
		go beat()
		fmt.Println("up")
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
}

// beat writes the time into this process's beat file, every 10 ms.
func beat() {
	path := filepath.Join(os.Getenv(envBeats), strconv.Itoa(os.Getpid()))
	for {
		os.WriteFile(path, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600)
		time.Sleep(10 * time.Millisecond)
	}
}

// running fails t for each of pids whose beat file does not change within
// a deadline scaled by the processes: one left suspended.
func running(t *testing.T, dir string, pids []int) {
	t.Helper()
	read := func(pid int) string { b, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(pid))); return string(b) }
	was := map[int]string{}
	for _, pid := range pids {
		was[pid] = read(pid)
	}
	deadline := time.Now().Add(10*time.Second + time.Duration(len(pids))*time.Second)
	for _, pid := range pids {
		for read(pid) == was[pid] {
			if time.Now().After(deadline) {
				t.Errorf("pid %d does not run (its beat file stays %q): left suspended", pid, was[pid])
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// An interrupt that comes as the first member is suspended: the reap
// ends interrupted, ends nothing, and every member it suspended is resumed
// — each of the three runs on. The control, before the reap: all three
// run, and one suspended by hand is seen not to.
func TestWindowsInterruptedReapLeavesNothingSuspended(t *testing.T) {
	dir := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run", "^$")
	parent.Env = append(os.Environ(), envTree+"=parent", envBeats+"="+dir)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "up" {
		t.Fatalf("the tree said %q, %v", line, err)
	}
	waitMembers(t, parent.Process.Pid, 3)
	pids := treeOf(t, parent.Process.Pid)
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil { // a handle: the pid stays this process's
			t.Cleanup(func() { p.Kill(); p.Release() })
		}
	}
	if len(pids) != 3 {
		t.Fatalf("the tree is %v, want the parent and its two children", pids)
	}
	running(t, dir, pids)

	// The control that a suspended process is seen: it writes nothing.
	snap, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Get(pids[1])
	if p == nil {
		t.Fatalf("pid %d is not in the table", pids[1])
	}
	h, err := kill.Open(kill.Target{PID: p.PID, StartTicks: p.StartTicks}, kill.NewGuard(nil))
	snap.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Signal(kill.Stop); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a last write in flight as it was suspended
	stuck := func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(pids[1])))
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			if c, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(pids[1]))); string(c) != string(b) {
				return false
			}
			time.Sleep(10 * time.Millisecond)
		}
		return true
	}()
	if err := h.Signal(kill.Continue); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if !stuck {
		t.Fatalf("control: pid %d suspended still wrote its beat file: the check cannot see a suspended process", pids[1])
	}

	plan, s := planFor(t, parent.Process.Pid, policy.Terminate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	opt := options(rec)
	opt.send = func(h *kill.Handle, sig kill.Signal) error {
		err := h.Signal(sig)
		if sig == kill.Stop {
			cancel() // Ctrl-C, as the first member is suspended
		}
		return err
	}
	res := Execute(ctx, plan, s, opt)
	if res[0].Outcome != policy.Interrupted {
		t.Fatalf("outcome %s (%s), want interrupted", res[0].Outcome, res[0].Detail)
	}
	stops, continues := rec.signals(kill.SignalName(kill.Stop)), rec.signals(kill.SignalName(kill.Continue))
	if stops == 0 || continues < stops {
		t.Errorf("%d suspended, %d resumed: want each one suspended resumed", stops, continues)
	}
	for _, sig := range []kill.Signal{kill.Term, kill.Kill} {
		if n := rec.signals(kill.SignalName(sig)); n != 0 {
			t.Errorf("%d %s after the interrupt", n, kill.SignalName(sig))
		}
	}
	running(t, dir, pids)
}

package platform

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestBirthsAreProcesses: threads this process starts and ends move the
// namespace's last pid but are no birth; processes it starts are, with
// their parent and uid. The control: the threads did move the last pid
// (what the sampled gate reads), so a count of pids would have taken
// them for forks.
func TestBirthsAreProcesses(t *testing.T) {
	lp, err := OpenLastPID()
	if err != nil {
		t.Skipf("no ns_last_pid here: %v", err)
	}
	defer lp.Close()
	b, err := NewBirths()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := lp.Read()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a thread of its own, ended with the goroutine (never unlocked)
		}()
	}
	wg.Wait()
	after, _ := lp.Read()
	if after == before {
		t.Fatal("control: 50 threads did not move the last pid: the check proves nothing")
	}
	bs, _, err := b.Look(time.Minute, 4096)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range bs {
		if x.PPID == os.Getpid() {
			t.Errorf("a thread of this process was taken for a birth: %+v", x.Process)
		}
	}
	var cmds []*exec.Cmd
	for range 5 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	bs, _, err = b.Look(time.Minute, 4096)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, x := range bs {
		for _, c := range cmds {
			if x.PID == c.Process.Pid && x.PPID == os.Getpid() && x.UID == uint32(os.Getuid()) && x.Parent != nil && x.Parent.PID == os.Getpid() {
				found++
			}
		}
	}
	if found != len(cmds) {
		t.Errorf("%d of the %d children found born, with their parent and uid: %+v", found, len(cmds), bs)
	}
}

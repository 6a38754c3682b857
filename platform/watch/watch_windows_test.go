package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// envHelper makes this test binary, run again, a process to watch: it
// says "up" and sleeps until it is ended.
const envHelper = "REAPER_WATCH_WINTEST"

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "sleep" {
		fmt.Println("up")
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sleeper is a started helper: its target, and a handle of the test's
// own, which tells when it has exited.
type sleeper struct {
	Target
	cmd *exec.Cmd
	h   windows.Handle
}

func start(t *testing.T) sleeper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), envHelper+"=sleep")
	up, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := up.Read(make([]byte, 2)); err != nil {
		t.Fatalf("the helper did not say it is up: %v", err)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { windows.CloseHandle(h) })
	var c, x, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &u); err != nil {
		t.Fatal(err)
	}
	return sleeper{Target: Target{PID: cmd.Process.Pid, StartTicks: uint64(time.Unix(0, c.Nanoseconds()).UnixMicro())}, cmd: cmd, h: h}
}

// kill ends s (TerminateProcess) and waits until it has exited.
func (s sleeper) kill(t *testing.T) {
	t.Helper()
	s.cmd.Process.Kill()
	if ev, err := windows.WaitForSingleObject(s.h, 30_000); err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("pid %d did not exit: %v", s.PID, err)
	}
}

func quietExits(t *testing.T, e *Exits, why string) {
	t.Helper()
	select {
	case got := <-e.C():
		t.Fatalf("%s: told %+v", why, got)
	case <-time.After(200 * time.Millisecond):
	}
}

// An exit of a watched process is told at once, a live one's is not (the
// control); a target whose pid names another process now is told at once
// (what it left is due a look); a target dropped from the set is no
// longer watched.
func TestWindowsExits(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, b, c := start(t), start(t), start(t)
	reused := Target{PID: c.PID, StartTicks: c.StartTicks + 1}
	if failed := e.Set([]Target{a.Target, b.Target, reused}); failed != 0 || e.Len() != 2 {
		t.Fatalf("Set: %d failed, %d watched; want 0 and 2", failed, e.Len())
	}
	if got := <-e.C(); got != reused {
		t.Errorf("the reused pid: told %+v, want %+v at once", got, reused)
	}
	quietExits(t, e, "every watched process lives")
	e.Set([]Target{a.Target}) // b is dropped
	b.kill(t)
	quietExits(t, e, "a dropped target exited")
	a.kill(t)
	select {
	case got := <-e.C():
		if got != a.Target {
			t.Errorf("told %+v, want %+v", got, a.Target)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the exit of a watched process was not told")
	}
	if e.Len() != 0 {
		t.Errorf("%d still watched after the exit", e.Len())
	}
}

// More processes than one WaitForMultipleObjects takes (64) are watched
// at once, and each exit is told once: the thread pool's waits have no
// batch to fill. They are ended in two halves, each read before the
// next: C holds 64, and 66 exits unread would be two Lost (what Lost is
// for, and not what this test asks) — the second half's waits were
// registered past the 64th all the same.
func TestWindowsExitsPastSixtyFour(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n = 64 + 2 // MAXIMUM_WAIT_OBJECTS (winnt.h), and more
	var all []sleeper
	var targets []Target
	for range n {
		s := start(t)
		all, targets = append(all, s), append(targets, s.Target)
	}
	if failed := e.Set(targets); failed != 0 || e.Len() != n {
		t.Fatalf("Set: %d failed, %d watched; want 0 and %d", failed, e.Len(), n)
	}
	quietExits(t, e, "all live")
	told := map[Target]int{}
	for _, half := range [][]sleeper{all[:n/2], all[n/2:]} {
		for _, s := range half {
			s.kill(t)
		}
		// Each exit is told once its wait fires: on a loaded machine
		// they come slowly, so the test waits while they keep coming,
		// and fails when none has come for 30 s (a lost one).
		for want := len(told) + len(half); len(told) < want; {
			select {
			case got := <-e.C():
				told[got]++
			case <-time.After(30 * time.Second):
				t.Fatalf("%d of %d exits told, and none for 30 s (lost: %v)", len(told), n, e.Lost())
			}
		}
	}
	quietExits(t, e, "every exit told already")
	if e.Lost() {
		t.Error("an exit was lost to a full channel, fewer than 64 unread")
	}
	for _, s := range all {
		if told[s.Target] != 1 {
			t.Errorf("pid %d told %d times", s.PID, told[s.Target])
		}
	}
}

// An owner that exits while the pass that leaves it out runs is told all
// the same: the reading goroutine is held off by the lock meanwhile. The
// control: a target dropped alive is not told.
func TestWindowsExitsDroppedAfterExit(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dead, alive := start(t), start(t)
	if failed := e.Set([]Target{dead.Target, alive.Target}); failed != 0 {
		t.Fatalf("Set: %d failed", failed)
	}
	e.mu.Lock()
	dead.kill(t)
	e.set(nil)
	e.mu.Unlock()
	select {
	case got := <-e.C():
		if got != dead.Target {
			t.Errorf("told %+v, want the dead %+v", got, dead.Target)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the exit of a target dropped after it exited was lost")
	}
	quietExits(t, e, "the live one dropped, or the dead one told twice")
}

// A file made, renamed in, written or removed in a watched dir is told
// with its name and the dir's uid; nothing in a dir not watched is (the
// control), nor in a dir dropped from the set; a missing dir and a file
// in a dir's place fail. (A link in a dir's place is refused by
// FILE_FLAG_OPEN_REPARSE_POINT's check; wine makes no links to test it
// with: docs/windows.md.)
func TestWindowsDirs(t *testing.T) {
	d, err := NewDirs()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	base := t.TempDir()
	a, b, other := Dir{Path: filepath.Join(base, "a"), UID: 1001}, Dir{Path: filepath.Join(base, "b"), UID: 1002}, filepath.Join(base, "other")
	for _, p := range []string{a.Path, b.Path, other} {
		os.Mkdir(p, 0o755)
	}
	os.WriteFile(filepath.Join(a.Path, "old"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	missing, file := Dir{Path: filepath.Join(base, "missing")}, Dir{Path: filepath.Join(base, "file")}
	if failed := d.Set([]Dir{a, b, missing, file}); failed != 2 || d.Len() != 2 {
		t.Fatalf("Set: %d failed, %d watched; want 2 (the missing dir, the file) and 2", failed, d.Len())
	}
	quiet := func(why string) { t.Helper(); quietDirs(t, d, why) }
	// told takes the other events of the same change too: a write is
	// told more than once here.
	told := func(want Dir, name, why string) {
		t.Helper()
		toldDir(t, d, want, name, why)
		want.Name = name
		for {
			select {
			case got := <-d.C():
				if got != want {
					t.Errorf("%s: told %+v too, want only %+v", why, got, want)
				}
			case <-time.After(200 * time.Millisecond):
				return
			}
		}
	}
	os.WriteFile(filepath.Join(other, "new"), nil, 0o644)
	quiet("a file made in a dir not watched")
	os.WriteFile(filepath.Join(a.Path, "old"), []byte("2"), 0o644)
	told(a, "old", "a file written in place")
	os.WriteFile(filepath.Join(a.Path, "session.json"), nil, 0o644)
	told(a, "session.json", "a file made")
	os.WriteFile(filepath.Join(other, "tmp"), nil, 0o644)
	quiet("a file written in a dir not watched")
	os.Rename(filepath.Join(other, "tmp"), filepath.Join(b.Path, "session.json"))
	told(b, "session.json", "a file renamed in")
	d.Set([]Dir{b})
	os.Remove(filepath.Join(a.Path, "session.json"))
	quiet("a file removed in a dir dropped from the set")
	os.Remove(filepath.Join(b.Path, "session.json"))
	told(b, "session.json", "a file removed")
}

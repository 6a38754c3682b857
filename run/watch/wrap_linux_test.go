package watch

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/policy"
)

// leaveSleep runs a shell that leaves a sleep behind and exits, through
// run (as reaper run does) or not, and returns the sleep's pid, killed at
// cleanup whatever happened.
func leaveSleep(t *testing.T, run func(argv []string) int) int {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pid")
	argv := []string{"/bin/sh", "-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $! > " + file}
	if code := run(argv); code != 0 {
		t.Fatalf("%v exited %d", argv, code)
	}
	b, err := os.ReadFile(file)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("the sleep's pid: %q, %v", b, err)
	}
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil) // ours, when adopted
	})
	return pid
}

// alive reports whether pid runs (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z' && b[i+2] != 'X'
}

// `reaper run -- CMD` in-process: what CMD left when it exited is
// adopted and reaped, and CMD's status is passed on. The control: the
// same command run plainly leaves its sleep alive.
func TestWrap(t *testing.T) {
	control := leaveSleep(t, func(argv []string) int {
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	})
	if !alive(control) {
		t.Fatalf("control: the sleep %d is gone without run", control)
	}
	// Ended here: this test process may be a subreaper already (another
	// test's doing), and would then have adopted it as run adopts.
	syscall.Kill(control, syscall.SIGKILL)
	w := &Wrap{Policy: policy.Default(policy.Clients{}), Clients: client.NewSet(), LockFile: filepath.Join(t.TempDir(), "reaper.lock"),
		Stderr: &bytes.Buffer{}}
	left := leaveSleep(t, func(argv []string) int {
		code, err := w.Run(argv)
		if err != nil {
			t.Fatal(err)
		}
		return code
	})
	if alive(left) {
		t.Errorf("the sleep %d CMD left is alive after run: %s", left, w.Stderr)
	}
	if code, err := w.Run([]string{"/bin/sh", "-c", "exit 7"}); code != 7 || err != nil {
		t.Errorf("CMD's status: %d, %v; want 7", code, err)
	}
	var se *StartError
	if _, err := w.Run([]string{filepath.Join(t.TempDir(), "missing")}); err == nil || !errors.As(err, &se) {
		t.Errorf("a CMD that cannot start: %v, want a StartError", err)
	}
}

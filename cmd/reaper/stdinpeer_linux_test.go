package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// adoptWithStdin starts `sleep 300` under argv0 as an orphan of this test
// (the subreaper) whose stdin is stdin, as a client spawns a stdio server.
// A background job of a shell without job control reads /dev/null, so the
// job takes its stdin from fd 3 itself.
func adoptWithStdin(t *testing.T, argv0 string, stdin *os.File) int {
	t.Helper()
	cmd := exec.Command("bash", "-c", `(exec -a "$0" sleep 300 0<&3 3<&- >/dev/null 2>&1) & echo $!`, argv0)
	cmd.ExtraFiles = []*os.File{stdin}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(out), &pid)
	t.Cleanup(func() { killTreeVerified(pid) })
	for deadline := time.Now().Add(5 * time.Second); !strings.HasPrefix(cmdlineOf(pid), argv0) || parentOf(pid) != os.Getpid(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %q, parent %d", pid, cmdlineOf(pid), parentOf(pid))
		}
	}
	return pid
}

// stdinPolicy terminates what is abandoned, confined to mark.
func stdinPolicy(t *testing.T, mark string) string {
	t.Helper()
	return writePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"

%s
[[rule]]
name = "abandoned"
when = ["abandoned"]
cmdline = '%s'
action = "terminate"
`, selfSubreaper(t), mark))
}

// TestStdinPeer: a reparented process whose stdin — a pipe, or a socket
// as Node gives its children — a live process outside its tree (this test)
// can still write to is in use by that process: no finding, and explain
// says who uses it. Once the writer lets go (closes the pipe; shuts the
// socket for writing, as a client's stdin.end() does), the kernel says no
// one can write to it: the finding is abandoned, and a rule on that reason
// kills it. The control: before the reap, the process lives on.
func TestStdinPeer(t *testing.T) {
	requireRoot(t) // pidfd_getfd needs ptrace attach access, which Yama may refuse a user
	becomeSubreaper(t)
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			mark := "stdinmark" + strings.ReplaceAll(suiteMark, "-", "x") + kind
			var mine, theirs *os.File
			if kind == "pipe" {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				mine, theirs = w, r
			} else {
				fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				mine, theirs = os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
			}
			defer mine.Close()
			pid := adoptWithStdin(t, mark+"-server", theirs)
			theirs.Close()
			pol := stdinPolicy(t, mark)

			rep, r := reapJSONEnv(t, nil, "--policy", pol)
			if f := rep.finding(pid); f != nil || !alive(pid) {
				t.Fatalf("in use by this test: finding %+v, alive %v\n%s", f, alive(pid), r.stderr)
			}
			ex := runReaper(t, nil, "explain", fmt.Sprint(pid), "--policy", pol)
			if !strings.Contains(ex.stdout, fmt.Sprintf("in use: pid %d", os.Getpid())) {
				t.Errorf("explain does not name this test as the user of its stdin:\n%s%s", ex.stdout, ex.stderr)
			}

			if kind == "pipe" {
				mine.Close()
			} else if err := syscall.Shutdown(int(mine.Fd()), syscall.SHUT_WR); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if !alive(pid) {
				t.Fatal("control: the process died when its stdin was let go (sleep does not read it)")
			}
			rep, r = reapJSONEnv(t, nil, "--policy", pol)
			f := rep.finding(pid)
			if f == nil || f.Outcome != "killed" || !contains(f.Reasons, "abandoned") {
				t.Fatalf("let go: finding %+v, want killed as abandoned\n%s", f, r.stdout)
			}
			t.Logf("%s let go: %v, %s", kind, f.Reasons, f.Outcome)
		})
	}
}

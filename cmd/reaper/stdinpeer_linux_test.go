package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
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
	t.Cleanup(func() { clitest.KillTreeVerified(pid) })
	for deadline := time.Now().Add(5 * time.Second); !strings.HasPrefix(clitest.CmdlineOf(pid), argv0) || clitest.ParentOf(pid) != os.Getpid(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %q, parent %d", pid, clitest.CmdlineOf(pid), clitest.ParentOf(pid))
		}
	}
	return pid
}

// stdinPolicy terminates what is abandoned, confined to mark.
func stdinPolicy(t *testing.T, mark string) string {
	t.Helper()
	return clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"

%s
[[rule]]
name = "abandoned"
when = ["abandoned"]
cmdline = '%s'
action = "terminate"
`, clitest.SelfSubreaper(t), mark))
}

// TestStdinPeer: a reparented process whose stdin — a pipe, or a socket
// as Node gives its children — a live process outside its tree (this test)
// can still write to is in use by that process: no finding, and explain
// says who uses it. Once the writer lets go (closes the pipe; shuts the
// socket for writing, as a client's stdin.end() does), the kernel says no
// one can write to it: the finding is abandoned, and a rule on that reason
// kills it. The control: before the reap, the process lives on.
func TestStdinPeer(t *testing.T) {
	clitest.RequireRoot(t) // pidfd_getfd needs ptrace attach access, which Yama may refuse a user
	clitest.BecomeSubreaper(t)
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			mark := "stdinmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + kind
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

			rep, r := clitest.ReapJSONEnv(t, nil, "--policy", pol)
			if f := rep.Finding(pid); f != nil || !clitest.Alive(pid) {
				t.Fatalf("in use by this test: finding %+v, alive %v\n%s", f, clitest.Alive(pid), r.Stderr)
			}
			ex := clitest.RunReaper(t, nil, "explain", fmt.Sprint(pid), "--policy", pol)
			if !strings.Contains(ex.Stdout, fmt.Sprintf("in use: pid %d", os.Getpid())) {
				t.Errorf("explain does not name this test as the user of its stdin:\n%s%s", ex.Stdout, ex.Stderr)
			}

			if kind == "pipe" {
				mine.Close()
			} else if err := syscall.Shutdown(int(mine.Fd()), syscall.SHUT_WR); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if !clitest.Alive(pid) {
				t.Fatal("control: the process died when its stdin was let go (sleep does not read it)")
			}
			rep, r = clitest.ReapJSONEnv(t, nil, "--policy", pol)
			f := rep.Finding(pid)
			if f == nil || f.Outcome != "killed" || !clitest.Contains(f.Reasons, "abandoned") {
				t.Fatalf("let go: finding %+v, want killed as abandoned\n%s", f, r.Stdout)
			}
			t.Logf("%s let go: %v, %s", kind, f.Reasons, f.Outcome)
		})
	}
}

// holdFDs starts `sleep 300` (as cred, nil: root) holding n more fds
// (/dev/null); it ends with the test.
func holdFDs(t *testing.T, n int, cred *syscall.Credential, setsid bool) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "300")
	for range n {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c.ExtraFiles = append(c.ExtraFiles, f)
	}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setsid: setsid}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// hoardingSession starts, as nobody, a session of four idle processes
// holding 520 fds each and an orphan titled argv0 whose stdin a process
// of nobody's holds open; all of them end with the test. It returns the
// orphan's pid.
func hoardingSession(t *testing.T, argv0 string) int {
	t.Helper()
	c := exec.Command("bash", "-c", `exec 2>/dev/null </dev/null
for i in $(seq 520); do exec {x}</dev/null; done
for i in 1 2 3 4; do sleep 300 >/dev/null & echo $!; done
(exec -a "$0" sleep 300 < <(exec sleep 300) >/dev/null) & echo $!`, argv0)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: nobody, Setsid: true}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("the hoarding session: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		var pid int
		fmt.Sscan(f, &pid)
		pids = append(pids, pid)
		t.Cleanup(func() { clitest.KillTreeVerified(pid); syscall.Wait4(pid, nil, 0, nil) })
	}
	if len(pids) != 5 {
		t.Fatalf("the hoarding session printed %q", out)
	}
	orphan := pids[4]
	for deadline := time.Now().Add(10 * time.Second); !strings.HasPrefix(clitest.CmdlineOf(orphan), argv0); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %q", orphan, clitest.CmdlineOf(orphan))
		}
	}
	return orphan
}

// inUseServer starts what a client leaves under it: a server reparented
// to this test whose stdin a "client" (a sleep of this test's, started
// now, in this test's session) still writes to. It returns the server's
// pid and the client's process.
func inUseServer(t *testing.T, argv0 string) (int, *exec.Cmd) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	client := exec.Command("sleep", "300")
	client.ExtraFiles = []*os.File{w}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Process.Kill(); client.Wait() })
	w.Close()
	pid := adoptWithStdin(t, argv0, r)
	r.Close()
	return pid, client
}

// TestStdinPeerSearchPerUser: the search for who writes to a server's
// stdin is bounded per user, never by one budget every user's findings
// share, and a search that did not finish is doubt, never a kill (issue
// 42, attack 1).
//
//   - attack: user A (nobody) starts four idle processes of 520 fds each
//     and an orphan of its own whose stdin is open (a finding a
//     report-only rule takes, which once put A's session in the search),
//     all before root's client starts. Root's server, which that client
//     still writes to, is in use: no finding, alive.
//   - doubt: the same hoarders in the server's own session and of its own
//     user (a browser started from that terminal) leave its writer
//     unread: the finding is refused with the reason, the server alive.
//   - control: the client gone, the server is abandoned and the same rule
//     kills it — the tree lived only by the proof of its use.
func TestStdinPeerSearchPerUser(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "stdinbudget" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pol := clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"

%s
[[rule]]
name = "theirs"
when = ["reparented"]
cmdline = '%s-a-'
user = ["65534"]
action = "report"

[[rule]]
name = "server"
when = ["reparented"]
cmdline = '%s-b-'
action = "terminate"
`, clitest.SelfSubreaper(t), mark, mark))

	t.Run("attack", func(t *testing.T) {
		// A's session: four hoarders, and an orphan whose stdin a
		// process of A's holds open.
		theirs := hoardingSession(t, mark+"-a-orphan")
		pid, client := inUseServer(t, mark+"-b-server")
		rep, r := clitest.ReapJSONEnv(t, nil, "--policy", pol)
		if f := rep.Finding(pid); f != nil || !clitest.Alive(pid) {
			t.Fatalf("root's server, in use by its client, under A's hoarding: finding %+v, alive %v\n%s", f, clitest.Alive(pid), r.Stderr)
		}
		if f := rep.Finding(theirs); f != nil && f.Outcome != "reported" {
			t.Errorf("A's orphan: %+v, want reported at most", f)
		}
		// The control: the client gone, the same rule kills it.
		client.Process.Kill()
		client.Wait()
		rep, r = clitest.ReapJSONEnv(t, nil, "--policy", pol)
		if f := rep.Finding(pid); f == nil || f.Outcome != "killed" || !clitest.Contains(f.Reasons, "abandoned") {
			t.Fatalf("control: its client gone: finding %+v, want killed as abandoned\n%s", f, r.Stdout)
		}
	})

	t.Run("doubt", func(t *testing.T) {
		hoarders := make([]*exec.Cmd, 5)
		for k := range hoarders {
			hoarders[k] = holdFDs(t, 520, nil, false)
		}
		pid, _ := inUseServer(t, mark+"-b-doubt")
		rep, r := clitest.ReapJSONEnv(t, nil, "--policy", pol)
		f := rep.Finding(pid)
		if !clitest.Alive(pid) || f != nil && (f.Outcome != "refused" || !strings.Contains(f.Detail, "is not known")) {
			t.Fatalf("its writer unread: finding %+v, alive %v; want refused as doubt, or no finding\n%s", f, clitest.Alive(pid), r.Stderr)
		}
		if f == nil {
			t.Fatalf("the hoarders did not exhaust the search: no doubt to prove (in use)")
		}
		t.Logf("doubt: %s", f.Detail)
		if r.Code != 3 {
			t.Errorf("a refusal for doubt: exit %d, want 3 (partial)", r.Code)
		}
		// The control: the hoarders gone, the writer is read: in use.
		for _, h := range hoarders {
			h.Process.Kill()
			h.Wait()
		}
		rep, r = clitest.ReapJSONEnv(t, nil, "--policy", pol)
		if f := rep.Finding(pid); f != nil || !clitest.Alive(pid) {
			t.Fatalf("control: the hoarders gone: finding %+v, alive %v; want in use\n%s", f, clitest.Alive(pid), r.Stderr)
		}
	})
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// leaveBehind is a bash command that leaves three processes marked with
// mark when it exits with code: one setsid'd, one double-forked, and one
// named "protected-MARK" — then exits.
func leaveBehind(mark string, code int) []string {
	return []string{"bash", "-c", fmt.Sprintf(`(setsid bash -c 'exec -a %[1]s-setsid sleep 300' </dev/null >/dev/null 2>&1 &)
(bash -c 'exec -a %[1]s-forked sleep 300' </dev/null >/dev/null 2>&1 &)
(bash -c 'exec -a protected-%[1]s sleep 300' </dev/null >/dev/null 2>&1 &)
sleep 0.3; exit %[2]d`, mark, code)}
}

// `reaper run -- CMD` passes CMD's exit status on and, when CMD exits,
// reaps what it left — a setsid'd and a double-forked process — but not
// what [[protect]] names. The control: the same command run directly
// leaves all three alive.
func TestRunReapsWhatItsCommandLeft(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "runleft-" + clitest.Mark
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\n[[protect]]\nname = \"kept\"\ncmdline = '^protected-%s'\n", mark))
	t.Cleanup(func() { realclients.KillOurs(mark) })

	t.Run("control: run directly", func(t *testing.T) {
		m := mark + "-direct"
		c := exec.Command(leaveBehind(m, 0)[0], leaveBehind(m, 0)[1:]...)
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		clitest.WaitFor(t, func() bool { return len(realclients.MarkedPIDs(m)) == 3 }, "three leftovers")
	})
	t.Run("reaper run", func(t *testing.T) {
		m := mark + "-run"
		c := exec.Command(clitest.Bin, append([]string{"run", "--policy", pol, "--lock-file", t.TempDir() + "/lock", "--"}, leaveBehind(m, 5)...)...)
		out, err := c.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 5 {
			t.Fatalf("reaper run: %v, want exit 5 (the command's)\n%s", err, out)
		}
		left := realclients.MarkedPIDs(m)
		if len(left) != 1 || !strings.HasPrefix(clitest.CmdlineOf(left[0]), "protected-") {
			t.Errorf("left alive: %v, want the protected one alone\n%s", left, out)
		}
		if !strings.Contains(string(out), "rule run-leftover") {
			t.Errorf("the reap is not said:\n%s", out)
		}
	})
	// A leftover that a live owner's evidence claims (the gateway pid it
	// carries is alive) is that owner's, not the command's: spared, while
	// an unclaimed one beside it is reaped.
	t.Run("a live owner's process", func(t *testing.T) {
		m := mark + "-owned"
		owner := adopt(t, "openclaw-gateway", "sleep 300; exit 0", nil)
		t.Cleanup(func() { syscall.Kill(owner, syscall.SIGKILL) })
		owned := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\n%s", gatewayOwner))
		script := fmt.Sprintf(`(OPENCLAW_GATEWAY_SERVICE_PID=%d bash -c 'exec -a %[2]s-claimed sleep 300' </dev/null >/dev/null 2>&1 &)
(bash -c 'exec -a %[2]s-unclaimed sleep 300' </dev/null >/dev/null 2>&1 &)
sleep 0.3`, owner, m)
		out, err := exec.Command(clitest.Bin, "run", "--policy", owned, "--lock-file", t.TempDir()+"/lock", "--", "bash", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("reaper run: %v\n%s", err, out)
		}
		left := realclients.MarkedPIDs(m)
		if len(left) != 1 || !strings.HasPrefix(clitest.CmdlineOf(left[0]), m+"-claimed") {
			t.Errorf("left alive: %v, want the claimed one alone\n%s", left, out)
		}
		if want := "its openclaw-gateway, pid"; !strings.Contains(string(out), want) {
			t.Errorf("the spared leftover is not said:\n%s", out)
		}
	})
	t.Run("a signal's status", func(t *testing.T) {
		out, err := exec.Command(clitest.Bin, "run", "--policy", pol, "--lock-file", t.TempDir()+"/lock", "--", "bash", "-c", "kill -TERM $$").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("a command ended by SIGTERM: %v, want exit 143\n%s", err, out)
		}
	})
}

// On a terminal, `reaper run -- CMD` is CMD as if run directly: CMD sees
// the terminal's window size, the terminal's Ctrl-C reaches CMD (its
// trap runs and its status is run's), and what CMD left — a setsid'd
// process, off the terminal — is reaped. The control: the same command as
// the terminal's session leader itself, without run, leaves its setsid'd
// process alive; it sees the same size and the same Ctrl-C.
func TestRunOnTerminal(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t) // the control's leftover comes back here, for the cleanup
	mark := "runterm-" + clitest.Mark
	pol := clitest.WritePolicy(t, "version = 1\n[defaults]\ngrace = \"2s\"\n")
	t.Cleanup(func() { realclients.KillOurs(mark) })
	script := func(m string) []string {
		return []string{"bash", "-c", fmt.Sprintf(`(setsid bash -c 'exec -a %[1]s-left sleep 300' </dev/null >/dev/null 2>&1 &)
trap 'echo got-int; exit 42' INT
echo "size $(stty size)"; echo ready
(exec -a %[1]s-wait sleep 60) & wait`, m)}
	}
	for _, viaRun := range []bool{false, true} {
		name := map[bool]string{false: "control: the command alone", true: "reaper run"}[viaRun]
		t.Run(name, func(t *testing.T) {
			m := fmt.Sprintf("%s-%v", mark, viaRun)
			argv := script(m)
			if viaRun {
				argv = append([]string{clitest.Bin, "run", "--policy", pol, "--lock-file", t.TempDir() + "/lock", "--"}, argv...)
			}
			master, slave, err := clitest.OpenPTY()
			if err != nil {
				t.Fatalf("pty: %v", err)
			}
			defer master.Close()
			if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 33, Col: 111}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			var mu sync.Mutex
			var screen bytes.Buffer
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := master.Read(buf)
					mu.Lock()
					screen.Write(buf[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			shown := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
			clitest.WaitFor(t, func() bool { return strings.Contains(shown(), "ready") }, "the command's ready line")
			leftovers := func() (out []int) {
				for _, pid := range realclients.MarkedPIDs(m + "-left") {
					if strings.HasPrefix(clitest.CmdlineOf(pid), m+"-left") {
						out = append(out, pid)
					}
				}
				return out
			}
			clitest.WaitFor(t, func() bool { return len(leftovers()) == 1 }, "the setsid'd leftover")
			master.Write([]byte{3}) // Ctrl-C, as the terminal's line discipline sends it: SIGINT to the foreground group
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 42 {
				t.Errorf("exit: %v, want 42 (the command's trap)\n%s", err, shown())
			}
			// What the command wrote last may still be on its way through
			// the terminal when it has exited.
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(shown(), "got-int") && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(shown(), "size 33 111") || !strings.Contains(shown(), "got-int") {
				t.Errorf("the command did not see the terminal's size and Ctrl-C:\n%s", shown())
			}
			left := leftovers()
			if viaRun && len(left) != 0 {
				t.Errorf("left alive under reaper run: %v\n%s", left, shown())
			}
			if !viaRun && len(left) != 1 {
				t.Errorf("control: left alive %v, want the setsid'd process", left)
			}
		})
	}
}

// Where run cannot adopt what its command leaves (macOS: no subreaper;
// --record does the same here), it records the command's descendants
// while the command runs and reaps those that outlive it: a child left
// running and a subtree (a shell still waiting on its own child) are
// killed when the command exits; a protected child is spared; a process
// of the host's with the same mark, never the command's, is left alone.
// And what recording cannot cover, said in run's help, is shown too: a
// daemon that detached itself between two looks (setsid'd, its middle
// process gone at once) is not reaped.
func TestRunRecordsWhatItCannotAdopt(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t) // the leftovers come back here, not to run: as to launchd on macOS
	mark := "runrec-" + clitest.Mark
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\n%s[[protect]]\nname = \"kept\"\ncmdline = '^protected-%s'\n", clitest.SelfSubreaper(t), mark))
	t.Cleanup(func() { realclients.KillOurs(mark) })
	adopt(t, mark+"-host", "sleep 300; exit 0", nil)
	// The command runs past two looks (a second apart) before it exits.
	script := fmt.Sprintf(`exec </dev/null >/dev/null 2>&1
(exec -a %[1]s-child sleep 300) &
(exec -a %[1]s-subtree bash -c '(exec -a %[1]s-grandchild sleep 300) & wait') &
(exec -a protected-%[1]s sleep 300) &
(setsid bash -c 'exec -a %[1]s-detached sleep 300' &)
sleep 2.5; exit 7`, mark)
	out, err := exec.Command(clitest.Bin, "run", "--record", "--policy", pol, "--lock-file", t.TempDir()+"/lock", "--", "bash", "-c", script).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("reaper run --record: %v, want exit 7 (the command's)\n%s", err, out)
	}
	alive := map[string]bool{}
	for _, pid := range realclients.MarkedPIDs(mark) {
		for _, what := range []string{"-child", "-subtree", "-grandchild", "-detached", "-host", "protected-"} {
			if c := clitest.CmdlineOf(pid); strings.HasPrefix(c, mark+what) || strings.HasPrefix(c, what+mark) {
				alive[what] = true
			}
		}
	}
	want := map[string]bool{"-detached": true, "-host": true, "protected-": true}
	if !maps.Equal(alive, want) {
		t.Errorf("alive after reaper run --record: %v, want only %v (the detached daemon: recording's limit)\n%s", alive, want, out)
	}
	if !strings.Contains(string(out), "rule run-leftover") {
		t.Errorf("the reap is not said:\n%s", out)
	}
}

package main

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

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
	requireRoot(t)
	becomeSubreaper(t)
	mark := "runleft-" + suiteMark
	pol := writePolicy(t, fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\n[[protect]]\nname = \"kept\"\ncmdline = '^protected-%s'\n", mark))
	t.Cleanup(func() { realclients.KillOurs(mark) })

	t.Run("control: run directly", func(t *testing.T) {
		m := mark + "-direct"
		c := exec.Command(leaveBehind(m, 0)[0], leaveBehind(m, 0)[1:]...)
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return len(realclients.MarkedPIDs(m)) == 3 }, "three leftovers")
	})
	t.Run("reaper run", func(t *testing.T) {
		m := mark + "-run"
		c := exec.Command(reaperBin, append([]string{"run", "--policy", pol, "--lock-file", t.TempDir() + "/lock", "--"}, leaveBehind(m, 5)...)...)
		out, err := c.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 5 {
			t.Fatalf("reaper run: %v, want exit 5 (the command's)\n%s", err, out)
		}
		left := realclients.MarkedPIDs(m)
		if len(left) != 1 || !strings.HasPrefix(cmdlineOf(left[0]), "protected-") {
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
		owned := writePolicy(t, fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\n%s", gatewayOwner))
		script := fmt.Sprintf(`(OPENCLAW_GATEWAY_SERVICE_PID=%d bash -c 'exec -a %[2]s-claimed sleep 300' </dev/null >/dev/null 2>&1 &)
(bash -c 'exec -a %[2]s-unclaimed sleep 300' </dev/null >/dev/null 2>&1 &)
sleep 0.3`, owner, m)
		out, err := exec.Command(reaperBin, "run", "--policy", owned, "--lock-file", t.TempDir()+"/lock", "--", "bash", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("reaper run: %v\n%s", err, out)
		}
		left := realclients.MarkedPIDs(m)
		if len(left) != 1 || !strings.HasPrefix(cmdlineOf(left[0]), m+"-claimed") {
			t.Errorf("left alive: %v, want the claimed one alone\n%s", left, out)
		}
		if want := "its openclaw-gateway, pid"; !strings.Contains(string(out), want) {
			t.Errorf("the spared leftover is not said:\n%s", out)
		}
	})
	t.Run("a signal's status", func(t *testing.T) {
		out, err := exec.Command(reaperBin, "run", "--policy", pol, "--lock-file", t.TempDir()+"/lock", "--", "bash", "-c", "kill -TERM $$").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("a command ended by SIGTERM: %v, want exit 143\n%s", err, out)
		}
	})
}

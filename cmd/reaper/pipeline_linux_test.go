package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// Issue 52, item 9: with a rule that ends what is reparented and a shell
// as PID 1, `reaper reap … | grep` killed grep — its own pipeline's other
// command, whose parent (the shell, PID 1) made it look reparented. Here
// the test process is the subreaper that parents both, as the shell
// would: the reaper's stdout is a pipe to the partner, which the rule
// names. The partner is the reaper's own job: no finding, alive. The
// control: a process of the same name on no pipe of the reaper's is
// killed by the same reap.
func TestOwnPipelinePartnerSpared(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("pipe%d", os.Getpid())
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"1s\"\n%s\n[[rule]]\nname = \"pipe\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), mark))
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat here")
	}
	// The control: a process the rule names, on no pipe of the reaper's.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep here")
	}
	other := &exec.Cmd{Path: sleep, Args: []string{"partner-" + mark, "600"}}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	partner := &exec.Cmd{Path: cat, Args: []string{"partner-" + mark}, Stdin: r, Stdout: &out}
	if err := partner.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { partner.Process.Kill(); partner.Wait() })
	reaper := exec.Command(clitest.Bin, "reap", "--policy", pol, "--journal", "off", "--lock-file", t.TempDir()+"/lock", "--output", "json")
	reaper.Stdout, reaper.Stderr = w, os.Stderr
	if err := reaper.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // as a shell does: only the reaper writes to the pipe
	if err := reaper.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
	}
	partner.Wait()
	if ws, ok := partner.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("the reaper's own pipeline partner was ended by %v; the reaper printed:\n%s", ws.Signal(), out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf(`"root_pid": %d`, other.Process.Pid)) {
		t.Errorf("the control, pid %d, is not in the report the partner read:\n%.3000s", other.Process.Pid, out.String())
	}
	if st := clitest.StateOf(other.Process.Pid); st != "" && st != "Z" {
		t.Errorf("the control, pid %d, is alive (state %s) after the reap", other.Process.Pid, st)
	}
}

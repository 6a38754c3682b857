package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// ignoringTree is a bash command for `reaper run --` that leaves one tree
// behind and exits once the tree has written its pid to pidfile (the
// test's waitFor bounds the whole): a shell that notes each SIGTERM in
// termed and lives on, with a child.
func ignoringTree(termed, pidfile string) []string {
	return []string{"bash", "-c", fmt.Sprintf(`(bash -c 'echo $$ > %q; trap "touch %q" TERM; while :; do sleep 600 & wait; done' </dev/null >/dev/null 2>&1 &)
until [ -s %q ]; do sleep 0.05; done`, pidfile, termed, pidfile)}
}

// runInGrace starts `reaper run` with pol and lock over a command that
// leaves ignoringTree behind, and returns once the reap has sent that tree
// SIGTERM (it is in its grace): run's process and the tree's root pid.
// Both end with the test.
func runInGrace(t *testing.T, pol, lock string, stderr *bytes.Buffer) (*exec.Cmd, int) {
	t.Helper()
	dir := t.TempDir()
	termed, pidfile := filepath.Join(dir, "termed"), filepath.Join(dir, "pid")
	cmd := exec.Command(clitest.Bin, append([]string{"run", "--policy", pol, "--lock-file", lock, "--"},
		ignoringTree(termed, pidfile)...)...)
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	clitest.WaitFor(t, func() bool { _, err := os.Stat(termed); return err == nil }, "SIGTERM to the tree CMD left")
	var pid int
	b, _ := os.ReadFile(pidfile)
	fmt.Sscan(string(b), &pid)
	t.Cleanup(func() { clitest.KillTreeVerified(pid) })
	return cmd, pid
}

// notStoppedNorConfined fails t for every process of the tree at pid that
// is stopped, or still in a confinement cgroup of reaper's.
func notStoppedNorConfined(t *testing.T, pid int) {
	t.Helper()
	for _, p := range append([]int{pid}, clitest.ChildrenOf(pid)...) {
		if s := clitest.StateOf(p); s == "T" || s == "t" {
			t.Errorf("pid %d left stopped", p)
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p)); bytes.Contains(b, []byte("/reaper-")) {
			t.Errorf("pid %d left in a confinement: %s", p, b)
		}
	}
}

// `reaper run` finishes what it started: a hang-up (the terminal closed
// right after quitting the client) or a Ctrl-\ that reaches it while it
// reaps what CMD left ends the reap as an interrupt ends `reaper reap` —
// nothing left stopped or confined, exit 128+N — instead of killing run
// with the tree in its hands (issue 42, attack 4). The tree ignores
// SIGTERM, so the reap is in its 60 s grace when the signal comes.
func TestRunInterruptedMidReap(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	pol := clitest.WritePolicy(t, "version = 1\n[defaults]\ngrace = \"60s\"\n")
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			var stderr bytes.Buffer
			cmd, pid := runInGrace(t, pol, filepath.Join(t.TempDir(), "reaper.lock"), &stderr)
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("reaper run did not end within 30 s of %s (its grace is 60 s)\n%s", sig, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit %v, want %d (128+%s)\n%s", err, 128+int(sig), sig, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted by "+map[syscall.Signal]string{syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT"}[sig]) {
				t.Errorf("the interrupt is not said:\n%s", stderr.String())
			}
			if !clitest.Alive(pid) {
				t.Fatalf("the tree died: an interrupt during the grace leaves it running")
			}
			notStoppedNorConfined(t, pid)
		})
	}
}

// A reap that dies anyway (SIGKILL, the OOM killer) leaves its record of
// what it stopped and confined beside its lock, and the next run gives it
// back before it reads the table: a process it stopped is continued, a
// confinement released. The control: a process stopped by someone else,
// which the record does not name, stays stopped.
func TestStoppedTreesResumedByTheNextRun(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "reaper.lock")
	stopped := func() int {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		c.Process.Signal(syscall.SIGSTOP)
		clitest.WaitFor(t, func() bool { return clitest.StateOf(c.Process.Pid) == "T" }, "the process stopped")
		return c.Process.Pid
	}
	ours, theirs := stopped(), stopped()
	start := func(pid int) string {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))[19]
	}
	record := fmt.Sprintf("{\"stop\":%d,\"start\":%s}\n{\"stop\":%d,\"start\":1}\n{\"stop\":", ours, start(ours), theirs)
	if err := os.WriteFile(filepath.Join(dir, "reaper.stopped"), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	pol := clitest.WritePolicy(t, "version = 1\n")
	r := clitest.RunReaper(t, nil, "reap", "--policy", pol, "--lock-file", lock, "--journal", "off", "--output", "json")
	if s := clitest.StateOf(ours); s == "T" {
		t.Errorf("the process the record names is still stopped\n%s%s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "had stopped 1 process still stopped: continued") {
		t.Errorf("the report does not say what it continued:\n%s", r.Stdout)
	}
	if s := clitest.StateOf(theirs); s != "T" {
		t.Errorf("control: a process the record names with another start was continued (state %s)", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "reaper.stopped")); err == nil {
		t.Error("the record is still there after the recovery")
	}
}

// SIGKILL to `reaper run` in the middle of a grace leaves the tree in a
// confinement (as root with cgroup v2): the next reap that takes the same
// lock releases it, and nothing is left stopped.
func TestKilledRunReleasedByTheNextRun(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	pol := clitest.WritePolicy(t, "version = 1\n[defaults]\ngrace = \"60s\"\n")
	dir := t.TempDir()
	lock := filepath.Join(dir, "reaper.lock")
	cmd, pid := runInGrace(t, pol, lock, nil)
	cmd.Process.Kill()
	cmd.Wait()
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if !bytes.Contains(cg, []byte("/reaper-")) {
		t.Logf("no confinement here (%s): the record's stops are what is checked", strings.TrimSpace(string(cg)))
	}
	if _, err := os.Stat(filepath.Join(dir, "reaper.stopped")); err != nil {
		t.Fatalf("the killed run left no record: %v", err)
	}
	r := clitest.RunReaper(t, nil, "reap", "--policy", clitest.WritePolicy(t, "version = 1\n"), "--lock-file", lock, "--journal", "off")
	if r.Code != 0 {
		t.Errorf("the next reap: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	notStoppedNorConfined(t, pid)
}

// Issue 51, attack 7: `reaper run` SIGKILLed mid-confinement, its tree
// then ended by someone else, left an empty reaper-* cgroup for hours,
// since only a reap with the dead run's lock (its record) looked for it.
// Any later root reap, whatever its lock, removes it once it is a few
// seconds old — polled here, reap after reap, until it is gone.
func TestKilledRunConfinementSwept(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	pol := clitest.WritePolicy(t, "version = 1\n[defaults]\ngrace = \"60s\"\n")
	cmd, pid := runInGrace(t, pol, filepath.Join(t.TempDir(), "reaper.lock"), nil)
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	path := ""
	for _, line := range strings.Split(string(cg), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok && strings.Contains(rest, "/reaper.confine/reaper-") {
			path = rest
		}
	}
	if path == "" {
		skips.Skipf(t, "no confinement here (%s): nothing to leave behind", strings.TrimSpace(string(cg)))
	}
	dir := ""
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(root + path); err == nil {
			dir = root + path
		}
	}
	if dir == "" {
		t.Fatalf("confinement %s not found under the cgroup2 mounts", path)
	}
	cmd.Process.Kill()
	cmd.Wait()
	clitest.KillTreeVerified(pid)
	clitest.WaitFor(t, func() bool {
		b, err := os.ReadFile(dir + "/cgroup.events")
		return err == nil && strings.Contains(string(b), "populated 0")
	}, "the dead run's confinement empty")
	other := filepath.Join(t.TempDir(), "other.lock") // not the dead run's: its record is not read
	var said bool
	pol = clitest.WritePolicy(t, "version = 1\n")
	for deadline := time.Now().Add(time.Minute); ; {
		r := clitest.RunReaper(t, nil, "reap", "--policy", pol, "--lock-file", other, "--journal", "off")
		said = said || strings.Contains(r.Stdout, "empty confinement")
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the empty confinement %s is still there after a minute of reaps", path)
		}
		time.Sleep(500 * time.Millisecond) // a reap every half second while it ages
	}
	if !said {
		t.Error("the reap that removed it did not say so")
	}
}

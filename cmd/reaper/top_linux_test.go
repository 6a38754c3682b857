package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// startTop runs `reaper top` on a pseudo-terminal of 24×80, with env
// added to the test's, and waits for its first screen.
func startTop(t *testing.T, env []string, args ...string) *clitest.Terminal {
	t.Helper()
	term := clitest.StartOnTerminal(t, t.TempDir(), clitest.OnTerminal(append(os.Environ(), env...)), append([]string{clitest.Bin, "top"}, args...)...)
	term.Resize(t, 24, 80)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(term.Screen(1<<20), "· by memory") {
		if time.Now().After(deadline) {
			t.Fatalf("top's first screen did not come within 30 s:\n%q", term.Screen(2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return term
}

// TestTop drives `reaper top` through a real pseudo-terminal: a session
// started while it runs shows within a refresh; k on the live session's
// process is refused and it lives; e explains; k on an orphan shows its
// dry-run, and the orphan lives on through "n" (the control) and is ended
// by "y"; q, Ctrl-C and SIGTERM each give the terminal back cooked.
func TestTop(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("top%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"")
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=", "XDG_STATE_HOME=" + t.TempDir()}
	term := startTop(t, env, "--policy", pol)

	session := "s-top-" + clitest.Mark
	owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, "npm exec mcp-remote https://"+mark), nil)
	server := childWith(t, owner, mark, "the session's server")
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	writeSession(t, home, owner, session)
	stray := adopt(t, "npm exec mcp-remote https://stray."+mark, "sleep 600; exit 0", nil)
	term.Shows(t, 0, fmt.Sprintf("Claude Code %d", owner), "the new session on the screen")
	term.Shows(t, 0, fmt.Sprintf("%-7d mcp", server), "the new session's server on the screen")
	term.Shows(t, 0, fmt.Sprintf("tree %d", stray), "the orphan on the screen")

	// The session's own process: k is refused, e explains.
	at := term.Written()
	// Searched by their marks, not their pids: in a namespace of its own
	// a pid is two digits, which a size or an age can show too.
	term.Keys(append(append([]string{"/"}, strings.Split("session-owner-"+mark, "")...), "\r", "g", "k")...)
	term.Shows(t, at, fmt.Sprintf("pid %d is a live session's process, not a finding", owner), "k refused on the live session")
	at = term.Written()
	term.Keys("e")
	term.Shows(t, at, fmt.Sprintf("pid %d ·", owner), "explain's story of the session's process")
	term.Keys("\x1b")
	if !clitest.Alive(owner) || !clitest.Alive(server) {
		t.Fatalf("the live session's processes died: owner %v server %v", clitest.Alive(owner), clitest.Alive(server))
	}

	// The orphan: k shows the plan; n leaves it (the control), y ends it.
	at = term.Written()
	term.Keys(append(append([]string{"/"}, strings.Split("stray."+mark, "")...), "\r", "g", "k")...)
	term.Shows(t, at, fmt.Sprintf("End tree %d as the plan says?", stray), "the dry-run of ending the orphan")
	at = term.Written()
	term.Keys("n")
	term.Shows(t, at, fmt.Sprintf("tree %d left as it is", stray), "the orphan left")
	if !clitest.Alive(stray) {
		t.Fatal("the orphan died before any y")
	}
	at = term.Written()
	term.Keys("k")
	term.Shows(t, at, fmt.Sprintf("End tree %d as the plan says?", stray), "the dry-run again")
	at = term.Written()
	term.Keys("y")
	clitest.WaitFor(t, func() bool { return !clitest.Alive(stray) }, "the orphan ended by y")
	// The report's outcome, not its title: the title's row held "reaper
	// …" before, and the renderer then writes only the cells that
	// changed, so "reaper reap ·" need not come whole (seen in CI as
	// nobody: "\x1b[8Greap ").
	term.Shows(t, at, "killed by ", "the reap's report")
	if !clitest.Alive(owner) || !clitest.Alive(server) {
		t.Errorf("ending the orphan touched the session: owner %v server %v", clitest.Alive(owner), clitest.Alive(server))
	}

	term.Keys("\x1b", "q") // the first key closes the report
	exited(t, term, "q")
	for _, way := range []string{"Ctrl-C", "SIGTERM"} {
		term := startTop(t, env, "--policy", pol)
		if way == "Ctrl-C" {
			term.Keys("\x03")
		} else {
			syscall.Kill(term.PID, syscall.SIGTERM)
		}
		exited(t, term, way)
	}
}

// exited waits for top to exit and checks it gave the terminal back:
// the alternate screen left, the cursor shown, the line discipline cooked.
func exited(t *testing.T, term *clitest.Terminal, way string) {
	t.Helper()
	var ws syscall.WaitStatus
	done := make(chan error, 1)
	go func() { _, err := syscall.Wait4(term.PID, &ws, 0, nil); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: wait: %v", way, err)
		}
	case <-time.After(30 * time.Second):
		syscall.Kill(term.PID, syscall.SIGKILL)
		t.Fatalf("%s: top did not exit within 30 s; its screen:\n%q", way, term.Screen(2000))
	}
	// Its last bytes may still be in the terminal when it is reaped: read
	// them all (the master reads to its end once no one holds the slave).
	select {
	case <-term.Drained:
	case <-time.After(10 * time.Second):
	}
	out := term.Screen(4096)
	if !strings.Contains(out, "\x1b[?1049l") || !strings.Contains(out, "\x1b[?25h") {
		t.Errorf("%s: top left the alternate screen or the cursor as they were: %q", way, clitest.Tail([]byte(out), 200))
	}
	if !term.Cooked(t) {
		t.Errorf("%s: the terminal was left raw", way)
	}
	t.Logf("%s: top exited (%v), the terminal cooked again", way, ws)
}

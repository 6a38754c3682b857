package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startTop runs `reaper top` on a pseudo-terminal of 24×80, with env
// added to the test's, and waits for its first screen.
func startTop(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	term := startOnTerminal(t, t.TempDir(), onTerminal(append(os.Environ(), env...)), append([]string{reaperBin, "top"}, args...)...)
	term.resize(t, 24, 80)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(term.screen(1<<20), "· by memory") {
		if time.Now().After(deadline) {
			t.Fatalf("top's first screen did not come within 30 s:\n%q", term.screen(2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return term
}

// keys types into the terminal, one key at a time as a person does.
func (term *terminal) keys(ks ...string) {
	for _, k := range ks {
		before := term.written()
		term.master.Write([]byte(k))
		time.Sleep(50 * time.Millisecond) // a key is one read for the TUI
		if k == "\x1b" {
			// A lone ESC is told from the start of an escape sequence
			// (Alt+key) only by the 50 ms that follow it with nothing
			// (the TUI's reader, ultraviolet's DefaultEscTimeout): the
			// next key waits until the TUI has drawn what ESC did — on a
			// loaded machine it may not have read it yet, and ESC with
			// the next key in one read is Alt+key.
			for deadline := time.Now().Add(10 * time.Second); term.written() == before && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// shows waits for the screen to show text after mark bytes of output.
func (term *terminal) shows(t *testing.T, mark int, text, what string) {
	t.Helper()
	since := func() string {
		term.mu.Lock()
		defer term.mu.Unlock()
		return term.out.String()[min(mark, term.out.Len()):]
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(since(), text); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%q); the screen since:\n%q", what, text, tail([]byte(since()), 3000))
		}
	}
}

// written is how much the TUI has written so far: a mark for shows.
func (term *terminal) written() int {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.Len()
}

// cooked reports whether the terminal is back in cooked mode — canonical
// input and echo on, as a shell leaves it — read from its slave's
// termios after the TUI has exited.
func (term *terminal) cooked(t *testing.T) bool {
	t.Helper()
	raw, _ := term.master.SyscallConn()
	var n int
	var err error
	raw.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN) })
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ICANON != 0 && tio.Lflag&unix.ECHO != 0
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
	becomeSubreaper(t)
	mark := fmt.Sprintf("top%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"")
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=", "XDG_STATE_HOME=" + t.TempDir()}
	term := startTop(t, env, "--policy", pol)

	session := "s-top-" + suiteMark
	owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, "npm exec mcp-remote https://"+mark), nil)
	server := childWith(t, owner, mark, "the session's server")
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	writeSession(t, home, owner, session)
	stray := adopt(t, "npm exec mcp-remote https://stray."+mark, "sleep 600; exit 0", nil)
	term.shows(t, 0, fmt.Sprintf("Claude Code %d", owner), "the new session on the screen")
	term.shows(t, 0, fmt.Sprintf("%-7d mcp", server), "the new session's server on the screen")
	term.shows(t, 0, fmt.Sprintf("tree %d", stray), "the orphan on the screen")

	// The session's own process: k is refused, e explains.
	at := term.written()
	// Searched by their marks, not their pids: in a namespace of its own
	// a pid is two digits, which a size or an age can show too.
	term.keys(append(append([]string{"/"}, strings.Split("session-owner-"+mark, "")...), "\r", "g", "k")...)
	term.shows(t, at, fmt.Sprintf("pid %d is a live session's process, not a finding", owner), "k refused on the live session")
	at = term.written()
	term.keys("e")
	term.shows(t, at, fmt.Sprintf("pid %d ·", owner), "explain's story of the session's process")
	term.keys("\x1b")
	if !alive(owner) || !alive(server) {
		t.Fatalf("the live session's processes died: owner %v server %v", alive(owner), alive(server))
	}

	// The orphan: k shows the plan; n leaves it (the control), y ends it.
	at = term.written()
	term.keys(append(append([]string{"/"}, strings.Split("stray."+mark, "")...), "\r", "g", "k")...)
	term.shows(t, at, fmt.Sprintf("End tree %d as the plan says?", stray), "the dry-run of ending the orphan")
	at = term.written()
	term.keys("n")
	term.shows(t, at, fmt.Sprintf("tree %d left as it is", stray), "the orphan left")
	if !alive(stray) {
		t.Fatal("the orphan died before any y")
	}
	at = term.written()
	term.keys("k")
	term.shows(t, at, fmt.Sprintf("End tree %d as the plan says?", stray), "the dry-run again")
	at = term.written()
	term.keys("y")
	waitFor(t, func() bool { return !alive(stray) }, "the orphan ended by y")
	// The report's outcome, not its title: the title's row held "reaper
	// …" before, and the renderer then writes only the cells that
	// changed, so "reaper reap ·" need not come whole (seen in CI as
	// nobody: "\x1b[8Greap ").
	term.shows(t, at, "killed by ", "the reap's report")
	if !alive(owner) || !alive(server) {
		t.Errorf("ending the orphan touched the session: owner %v server %v", alive(owner), alive(server))
	}

	term.keys("\x1b", "q") // the first key closes the report
	exited(t, term, "q")
	for _, way := range []string{"Ctrl-C", "SIGTERM"} {
		term := startTop(t, env, "--policy", pol)
		if way == "Ctrl-C" {
			term.keys("\x03")
		} else {
			syscall.Kill(term.pid, syscall.SIGTERM)
		}
		exited(t, term, way)
	}
}

// exited waits for top to exit and checks it gave the terminal back:
// the alternate screen left, the cursor shown, the line discipline cooked.
func exited(t *testing.T, term *terminal, way string) {
	t.Helper()
	var ws syscall.WaitStatus
	done := make(chan error, 1)
	go func() { _, err := syscall.Wait4(term.pid, &ws, 0, nil); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: wait: %v", way, err)
		}
	case <-time.After(30 * time.Second):
		syscall.Kill(term.pid, syscall.SIGKILL)
		t.Fatalf("%s: top did not exit within 30 s; its screen:\n%q", way, term.screen(2000))
	}
	// Its last bytes may still be in the terminal when it is reaped: read
	// them all (the master reads to its end once no one holds the slave).
	select {
	case <-term.drained:
	case <-time.After(10 * time.Second):
	}
	out := term.screen(4096)
	if !strings.Contains(out, "\x1b[?1049l") || !strings.Contains(out, "\x1b[?25h") {
		t.Errorf("%s: top left the alternate screen or the cursor as they were: %q", way, tail([]byte(out), 200))
	}
	if !term.cooked(t) {
		t.Errorf("%s: the terminal was left raw", way)
	}
	t.Logf("%s: top exited (%v), the terminal cooked again", way, ws)
}

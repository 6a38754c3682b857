//go:build linux

package clitest

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Terminal is a client running on a pseudo-Terminal of the test's, as in a
// Terminal window: the session leader, the Terminal its controlling one.
// What it writes is Drained (a TUI blocks on a full Terminal) and kept.
type Terminal struct {
	PID    int
	Master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	closed bool
	// Drained is closed when the master reads nothing more: every holder
	// of the slave has closed it (or the master was closed).
	Drained chan struct{}
}

// StartOnTerminal starts argv as the session leader of a new
// pseudo-terminal and SIGKILLs its process group when the test ends.
func StartOnTerminal(t *testing.T, dir string, env []string, argv ...string) *Terminal {
	t.Helper()
	master, slave, err := OpenPTY()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		master.Close()
		slave.Close()
		t.Fatalf("start %v: %v", argv, err)
	}
	slave.Close()
	term := &Terminal{PID: cmd.Process.Pid, Master: master, Drained: make(chan struct{})}
	go func() {
		defer close(term.Drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		syscall.Kill(-term.PID, syscall.SIGKILL)
		cmd.Wait()
		term.Close()
	})
	return term
}

// Close closes the terminal, as its window is closed: the kernel hangs it
// up, and its session leader gets SIGHUP (then, as it exits, its
// foreground process group).
func (term *Terminal) Close() {
	term.mu.Lock()
	defer term.mu.Unlock()
	if !term.closed {
		term.Master.Close()
		term.closed = true
	}
}

// Resize gives the terminal a window's size. A new pseudo-terminal has
// none (0×0), as no window does: Copilot CLI 1.0.102 then draws nothing
// and takes no key.
func (term *Terminal) Resize(t *testing.T, rows, cols uint16) {
	t.Helper()
	raw, err := term.Master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ioErr error
	if err := raw.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	}); err != nil || ioErr != nil {
		t.Fatalf("resize: %v %v", err, ioErr)
	}
}

// Output is all the client wrote to its terminal.
func (term *Terminal) Output() []byte {
	term.mu.Lock()
	defer term.mu.Unlock()
	return bytes.Clone(term.out.Bytes())
}

// Screen is what the client wrote to its terminal, its last n bytes.
func (term *Terminal) Screen(n int) string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return Tail(term.out.Bytes(), n)
}

// OnTerminal is env with a terminal's TERM, for a client's interactive UI
// (clientEnv's dumb one is the detached jobs').
func OnTerminal(env []string) []string {
	out := []string{"TERM=xterm-256color"}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TERM=") {
			out = append(out, kv)
		}
	}
	return out
}

// Keys types into the terminal, one key at a time as a person does.
func (term *Terminal) Keys(ks ...string) {
	for _, k := range ks {
		before := term.Written()
		term.Master.Write([]byte(k))
		time.Sleep(50 * time.Millisecond) // a key is one read for the TUI
		if k == "\x1b" {
			// A lone ESC is told from the start of an escape sequence
			// (Alt+key) only by the 50 ms that follow it with nothing
			// (the TUI's reader, ultraviolet's DefaultEscTimeout): the
			// next key waits until the TUI has drawn what ESC did — on a
			// loaded machine it may not have read it yet, and ESC with
			// the next key in one read is Alt+key.
			for deadline := time.Now().Add(10 * time.Second); term.Written() == before && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// Shows waits for the screen to show text after mark bytes of output.
func (term *Terminal) Shows(t *testing.T, mark int, text, what string) {
	t.Helper()
	since := func() string {
		term.mu.Lock()
		defer term.mu.Unlock()
		return term.out.String()[min(mark, term.out.Len()):]
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(since(), text); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%q); the screen since:\n%q", what, text, Tail([]byte(since()), 3000))
		}
	}
}

// Written is how much the TUI has Written so far: a mark for Shows.
func (term *Terminal) Written() int {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.Len()
}

// Cooked reports whether the terminal is back in Cooked mode — canonical
// input and echo on, as a shell leaves it — read from its slave's
// termios after the TUI has exited.
func (term *Terminal) Cooked(t *testing.T) bool {
	t.Helper()
	raw, _ := term.Master.SyscallConn()
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

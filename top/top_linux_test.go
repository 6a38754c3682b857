package top

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/run/view"
)

// crashing is a Source whose pass panics, as a bug would.
type crashing struct{}

func (crashing) View(context.Context) (*audit.PSView, error) { panic("a bug in a pass") }
func (crashing) Explain(context.Context, int) (string, error) {
	return "", errors.New("not here")
}
func (crashing) End(context.Context, int, bool) (*view.Ending, error) {
	return nil, errors.New("not here")
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// A crash gives the terminal back: the pass panics inside top (Bubble
// Tea runs it as a command), and the program ends with ErrCrashed and
// the panic's words, the line discipline cooked again and the alternate
// screen left.
// The control: while it ran, the terminal was raw.
func TestCrashRestoresTerminal(t *testing.T) {
	master, slave := openPTY(t)
	cooked := func() bool {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ICANON != 0 && tio.Lflag&unix.ECHO != 0
	}
	if !cooked() {
		t.Fatal("a new terminal is not cooked")
	}
	var screen strings.Builder
	var mu sync.Mutex
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// Bubble Tea gets a terminal of its own, never closed here: after
	// a panic it ends without waiting for its input reader, which may
	// still read the file's descriptor (a close would race with it).
	fd, err := unix.Dup(int(slave.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	tty := os.NewFile(uintptr(fd), "tty")
	m := New(crashing{}, Options{})
	m.src = &slow{crashing{}, make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), m, tea.WithInput(tty), tea.WithOutput(tty)) }()
	raw := false
	for deadline := time.Now().Add(20 * time.Second); !raw && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		raw = !cooked()
	}
	if !raw {
		t.Fatal("control: top never put the terminal in raw mode")
	}
	close(m.src.(*slow).go_)
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("top did not end after its pass panicked")
	}
	if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "a bug in a pass") {
		t.Errorf("err %v, want ErrCrashed with the panic", err)
	}
	if !cooked() {
		t.Error("the terminal was left raw after the crash")
	}
	left := func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		s := screen.String()
		return strings.Contains(s, "\x1b[?1049l"), s
	}
	ok, s := left()
	for deadline := time.Now().Add(20 * time.Second); !ok && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ok, s = left()
	}
	if !ok {
		t.Errorf("the alternate screen was not left: %q", s[max(0, len(s)-200):])
	}
}

// slow holds the pass until go_ is closed: the test sees the terminal
// raw before the panic.
type slow struct {
	crashing
	go_ chan struct{}
}

func (s *slow) View(ctx context.Context) (*audit.PSView, error) {
	<-s.go_
	return s.crashing.View(ctx)
}

package top

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/run"
)

// crashing is a Source whose pass panics, as a bug would.
type crashing struct{}

func (crashing) View(context.Context) (*audit.PSView, error) { panic("a bug in a pass") }
func (crashing) Explain(context.Context, int) (string, error) {
	return "", errors.New("not here")
}
func (crashing) End(context.Context, int, bool) (*run.Ending, error) {
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
// Tea runs it as a command), and the program ends with ErrProgramPanic
// with the line discipline cooked again and the alternate screen left.
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
	out := make(chan string, 1)
	go func() { b, _ := io.ReadAll(master); out <- string(b) }()
	m := New(crashing{}, Options{})
	m.src = &slow{crashing{}, make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- Run(m, tea.WithInput(slave), tea.WithOutput(slave)) }()
	raw := false
	for deadline := time.Now().Add(20 * time.Second); !raw && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		raw = !cooked()
	}
	if !raw {
		t.Fatal("control: top never put the terminal in raw mode")
	}
	close(m.src.(*slow).go_)
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("top did not end after its pass panicked")
	}
	if !errors.Is(err, tea.ErrProgramPanic) {
		t.Errorf("err %v, want ErrProgramPanic", err)
	}
	if !cooked() {
		t.Error("the terminal was left raw after the crash")
	}
	slave.Close()
	if s := <-out; !strings.Contains(s, "\x1b[?1049l") {
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

package kill

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// Handle is a checked handle on one process. macOS has no pidfd: a pid can
// only be signalled by number, so the identity is proven again immediately
// before every kill(2) — start time, uid and argv as first seen — and the
// window between that check and the signal is what min_age guards.
type Handle struct {
	PID   int
	start uint64
	uid   uint32
	argv  []string
	guard *Guard
}

// parentPID reads pid's parent from its kinfo_proc.
func parentPID(pid int) (int, error) {
	p, err := platform.ProcessOf(pid)
	if err != nil {
		return 0, err
	}
	return p.PPID, nil
}

func pidfdSupported() (pidfd, pidfs bool) { return false, false }

func open(t Target, g *Guard) (*Handle, error) {
	if err := g.check(t.PID); err != nil {
		return nil, err
	}
	h := &Handle{PID: t.PID, start: t.StartTicks, guard: g}
	p, err := h.current()
	if err != nil {
		return nil, err
	}
	h.uid = p.UID
	if b, err := platform.ProcArgs(t.PID); err == nil {
		h.argv, _, _ = platform.ParseProcArgs2(b)
	}
	return h, nil
}

// current reads the process now and checks it is still the one opened.
func (h *Handle) current() (*platform.Process, error) {
	p, err := platform.ProcessOf(h.PID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("pid %d: %w", h.PID, ErrGone)
	case p.Zombie():
		return nil, fmt.Errorf("pid %d is a zombie: %w", h.PID, ErrGone)
	case p.StartTicks != h.start:
		return nil, fmt.Errorf("pid %d started %s, the scan saw %s: %w", h.PID,
			platform.FormatDarwinIdentity(p.StartTicks), platform.FormatDarwinIdentity(h.start), ErrIdentity)
	}
	return p, nil
}

func (h *Handle) pidfd() bool { return false }

func (h *Handle) close() error { return nil }

func (h *Handle) signal(sig syscall.Signal) error {
	if err := h.guard.check(h.PID); err != nil {
		return err
	}
	p, err := h.current()
	if err != nil {
		return err
	}
	if p.UID != h.uid {
		return fmt.Errorf("pid %d changed uid %d → %d: %w", h.PID, h.uid, p.UID, ErrIdentity)
	}
	if h.argv != nil {
		b, err := platform.ProcArgs(h.PID)
		argv, _, perr := platform.ParseProcArgs2(b)
		if err != nil || perr != nil || !slices.Equal(argv, h.argv) {
			return fmt.Errorf("pid %d: argv changed or unreadable: %w", h.PID, ErrIdentity)
		}
	}
	return signalError(h.PID, sig, unix.Kill(h.PID, sig))
}

func (h *Handle) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := h.current(); errors.Is(err, ErrGone) || errors.Is(err, ErrIdentity) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *Handle) state() string {
	p, err := h.current()
	if err != nil {
		return ""
	}
	return string(p.State)
}

package kill

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// pidfsMagic is PIDFS_MAGIC (include/uapi/linux/magic.h): since Linux 6.9 a
// pidfd lives on pidfs, where each process has an inode number unique for
// the life of the system.
const pidfsMagic = 0x50494446

// Handle is an open, verified handle on one process. On Linux it is a
// pidfd (pidfd_open(2), Linux 5.3): it pins the process it was opened on,
// so a signal sent through it cannot reach a later process that reuses the
// pid. The identity is checked after the pidfd is opened — the pidfd pins
// the current occupant, the start time proves it is the scanned one
// (systemd's pidref_verify pattern).
type Handle struct {
	PID   int
	fd    int    // -1 where pidfd_open is unavailable
	inode uint64 // pidfs inode, 0 when not on pidfs
	guard *Guard
	start uint64
}

// parentPID reads pid's parent from /proc.
func parentPID(pid int) (int, error) {
	p, err := platform.ReadStat(pid)
	if err != nil {
		return 0, err
	}
	return p.PPID, nil
}

func pidfdSupported() (pidfd, pidfs bool) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false, false
	}
	defer unix.Close(fd)
	var st unix.Statfs_t
	return true, unix.Fstatfs(fd, &st) == nil && st.Type == pidfsMagic
}

func open(t Target, g *Guard) (*Handle, error) {
	if err := g.check(t.PID); err != nil {
		return nil, err
	}
	h := &Handle{PID: t.PID, fd: -1, guard: g, start: t.StartTicks}
	fd, err := unix.PidfdOpen(t.PID, 0)
	switch {
	case err == nil:
		h.fd = fd
		var st unix.Stat_t
		var sfs unix.Statfs_t
		if unix.Fstatfs(fd, &sfs) == nil && sfs.Type == pidfsMagic && unix.Fstat(fd, &st) == nil {
			h.inode = st.Ino
		}
	case errors.Is(err, unix.ESRCH):
		return nil, fmt.Errorf("pid %d: %w", t.PID, ErrGone)
	case errors.Is(err, unix.ENOSYS):
		// No pidfd (Linux < 5.3): identity is re-checked before every signal.
	default:
		return nil, fmt.Errorf("pidfd_open %d: %w", t.PID, err)
	}
	if err := h.verify(); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// verify re-reads the process's stat and compares its identity.
func (h *Handle) verify() error {
	p, err := platform.ReadStat(h.PID)
	if err != nil {
		if gone(err) {
			return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
		}
		return err
	}
	switch {
	case p.StartTicks != h.start:
		return fmt.Errorf("pid %d started at tick %d, the scan saw %d: %w", h.PID, p.StartTicks, h.start, ErrIdentity)
	case p.KernelThread():
		return &RefusalError{h.PID, "a kernel thread"}
	case p.Zombie():
		return fmt.Errorf("pid %d is a zombie: %w", h.PID, ErrGone)
	}
	return nil
}

func (h *Handle) pidfd() bool { return h.fd >= 0 }

func (h *Handle) close() error {
	if h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	return err
}

func (h *Handle) signal(sig syscall.Signal) error {
	if err := h.guard.check(h.PID); err != nil {
		return err
	}
	var err error
	if h.fd >= 0 {
		if h.inode != 0 {
			var st unix.Stat_t
			if unix.Fstat(h.fd, &st) == nil && st.Ino != h.inode {
				return fmt.Errorf("pid %d: pidfd inode changed: %w", h.PID, ErrIdentity)
			}
		}
		err = unix.PidfdSendSignal(h.fd, sig, nil, 0)
	} else {
		if err := h.verify(); err != nil {
			return err
		}
		err = unix.Kill(h.PID, sig)
	}
	return signalError(h.PID, sig, err)
}

func (h *Handle) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if h.fd >= 0 {
			ms := int(time.Until(deadline) / time.Millisecond)
			if ms < 0 {
				ms = 0
			}
			fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, ms)
			if err == unix.EINTR {
				continue
			}
			if n > 0 {
				return true
			}
		} else if err := h.verify(); errors.Is(err, ErrGone) || errors.Is(err, ErrIdentity) {
			return true
		} else {
			time.Sleep(10 * time.Millisecond)
		}
		if !time.Now().Before(deadline) {
			return false
		}
	}
}

func (h *Handle) state() string {
	p, err := platform.ReadStat(h.PID)
	if err != nil || p.StartTicks != h.start {
		return ""
	}
	return string(p.State)
}

//go:build !linux && !darwin && !windows

package kill

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// Handle is not implemented on this platform.
type Handle struct{ PID int }

// parentPID is unknown here.
func parentPID(pid int) (int, error) {
	return 0, fmt.Errorf("process table on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func pidfdSupported() (pidfd, pidfs bool) { return false, false }

func open(t Target, g *Guard) (*Handle, error) {
	return nil, fmt.Errorf("signal on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (h *Handle) pidfd() bool { return false }

func (h *Handle) close() error { return nil }

func (h *Handle) signal(sig syscall.Signal) error {
	return fmt.Errorf("signal on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (h *Handle) waitGone(d time.Duration) bool { return false }

func (h *Handle) state() string { return "" }

// endCall: see EndCall.
const endCall = ""

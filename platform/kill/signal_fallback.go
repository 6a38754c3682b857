//go:build !linux && !darwin

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

// Pidfd reports false.
func (h *Handle) Pidfd() bool { return false }

// Close does nothing.
func (h *Handle) Close() error { return nil }

// Signal is not implemented on this platform.
func (h *Handle) Signal(sig syscall.Signal) error {
	return fmt.Errorf("signal on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// WaitGone cannot wait here.
func (h *Handle) WaitGone(d time.Duration) bool { return false }

// State is unknown here.
func (h *Handle) State() string { return "" }

//go:build !linux && !darwin

package platform

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// DefaultProcRoot has no meaning where there is no procfs.
const DefaultProcRoot = ""

// ReadSnapshot is not implemented on this platform: it fails loudly rather
// than returning an empty table that would read as "no orphans".
func ReadSnapshot(root string) (*Snapshot, error) {
	return nil, fmt.Errorf("process snapshot on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// StartIdentity is not implemented on this platform.
func StartIdentity(pid int) (string, error) {
	return "", fmt.Errorf("start identity on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Handle is not implemented on this platform.
type Handle struct{ PID int }

// parentPID is unknown here.
func parentPID(pid int) (int, error) {
	return 0, fmt.Errorf("process table on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// PidfdSupported: no pidfds here.
func PidfdSupported() (pidfd, pidfs bool) { return false, false }

// Open is not implemented on this platform: the kill path fails loudly.
func Open(t Target, g *Guard) (*Handle, error) {
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

// ChildSpec is a reader child; none run on this platform.
type ChildSpec struct {
	Args           []string
	Env            []string
	Drop           bool
	UID, GID       uint32
	MaxOut, MaxErr int
	Buf            []byte
}

// RunChild is not implemented on this platform.
func RunChild(ctx context.Context, spec ChildSpec) ([]byte, error) {
	return nil, fmt.Errorf("reader child on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Limits are a reader child's limits.
type Limits struct {
	Data, CPU, Files uint64
	Memory           int64
}

// LimitSelf is not implemented on this platform.
func LimitSelf(l Limits) error {
	return fmt.Errorf("resource limits on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

//go:build !linux

package platform

import (
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

// NewGuard makes a guard; nothing can be signalled through it here.
func NewGuard(deny map[int]string) *Guard { return &Guard{Deny: deny, self: map[int]bool{}} }

// PidfdSupported: no pidfds here.
func PidfdSupported() (pidfd, pidfs bool) { return false, false }

// Open is not implemented on this platform: the kill path fails loudly.
func Open(t Target, g *Guard) (*Handle, error) {
	return nil, fmt.Errorf("signal on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Pidfd reports false.
func (h *Handle) Pidfd() bool { return false }

// Inode reports 0.
func (h *Handle) Inode() uint64 { return 0 }

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

// JournalEnabled: there is no journald here.
func JournalEnabled() bool { return false }

// JournalSend is not implemented on this platform.
func JournalSend(message string, priority int, fields map[string]string) error {
	return fmt.Errorf("journald on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// PTYHold is one pseudo-terminal a process holds open.
type PTYHold struct {
	PTS            int
	Master, HungUp bool
}

// PTYHolds is not implemented on this platform.
func (s *Snapshot) PTYHolds(p *Process) ([]PTYHold, error) {
	return nil, fmt.Errorf("pty holds on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Sample is a process's CPU and I/O at one moment.
type Sample struct {
	At         time.Time
	CPUTicks   uint64
	IO         IOCounters
	IOKnown    bool
	TTYWritten time.Time
}

// SampleProcess is not implemented on this platform.
func (s *Snapshot) SampleProcess(p *Process) (Sample, error) {
	return Sample{}, fmt.Errorf("sampling on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

//go:build !linux

package platform

import (
	"errors"
	"fmt"
	"runtime"
)

// PTYHolds is not implemented on this platform.
func (s *Snapshot) PTYHolds(p *Process) ([]PTYHold, error) {
	return nil, fmt.Errorf("pty holds on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// SampleProcess is not implemented on this platform.
func (s *Snapshot) SampleProcess(p *Process) (Sample, error) {
	return Sample{}, fmt.Errorf("sampling on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// PSS is not implemented on this platform: reclaimable memory is RSS.
func (s *Snapshot) PSS(p *Process) (uint64, error) {
	return 0, fmt.Errorf("pss on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// ReadStdin is not implemented on this platform: no claim about stdin.
// (macOS's proc_pidfdinfo gives a pipe's peer handle, but not through any
// call reaper makes without cgo.)
func (s *Snapshot) ReadStdin(p *Process) (Stdin, error) {
	return Stdin{}, nil
}

// ReadStdout is not implemented on this platform: no claim about stdout.
func (s *Snapshot) ReadStdout(p *Process) (Stdin, error) {
	return Stdin{}, nil
}

// StdinWriters is not implemented on this platform.
func (s *Snapshot) StdinWriters(sts []Stdin, procs []*Process, enough func(map[uint64][]Writer) bool) (map[uint64][]Writer, int) {
	return nil, 0
}

// NamespaceInit is Linux's alone: there are no PID namespaces here.
func (s *Snapshot) NamespaceInit(*Process) bool { return false }

// Wchan is not shown on this platform.
func (s *Snapshot) Wchan(*Process) string { return "" }

// PIDsLimit is not read on this platform.
func (s *Snapshot) PIDsLimit(*Process) (uint64, uint64, string) { return 0, 0, "" }

func pIDNamespace() string { return "" }

func machineID() string { return "" }

// statGoroutines: the table is read whole by one call; what else reads a
// file a process reads it on one goroutine.
func statGoroutines(int) int { return 1 }

// One process read alone is Linux's (its /proc/PID files).
func readCmdline(int) ([]string, error) {
	return nil, fmt.Errorf("a command line read alone on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func readStat(int) (*Process, error) {
	return nil, fmt.Errorf("a process read alone on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func readUID(int) (uint32, error) {
	return 0, fmt.Errorf("a uid read alone on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// readFamily knows no children here: nothing is adopted (reaper run's
// --under is Linux's).
func readFamily(int) Family { return Family{} }

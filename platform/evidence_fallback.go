//go:build !linux

package platform

import (
	"errors"
	"fmt"
	"runtime"
)

func (s *Snapshot) ptyHolds(p *Process) ([]PTYHold, error) {
	return nil, fmt.Errorf("pty holds on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (s *Snapshot) sampleProcess(p *Process) (Sample, error) {
	return Sample{}, fmt.Errorf("sampling on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (s *Snapshot) pss(p *Process) (uint64, error) {
	return 0, fmt.Errorf("pss on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (s *Snapshot) readStdin(p *Process) (Stdin, error) {
	return Stdin{}, nil
}

func (s *Snapshot) readStdout(p *Process) (Stdin, error) {
	return Stdin{}, nil
}

func (s *Snapshot) stdinWriters(sts []Stdin, procs []*Process, enough func(map[uint64][]Writer) bool) (map[uint64][]Writer, int) {
	return nil, 0
}

func (s *Snapshot) namespaceInit(*Process) bool { return false }

func (s *Snapshot) wchan(*Process) string { return "" }

func (s *Snapshot) pidsLimit(*Process) (uint64, uint64, string) { return 0, 0, "" }

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

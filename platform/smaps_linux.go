package platform

import (
	"errors"
	"fmt"
	"os"
)

// PSS is p's proportional set size (the Pss line of
// /proc/PID/smaps_rollup, Linux 4.14+, proc(5)): its resident pages, each
// shared page divided among the processes that map it. Unlike RSS, the
// PSS of a tree's processes adds up to what their exit frees, shared
// libraries and forked copies counted once. It needs ptrace read access,
// as the environment does; the start time is checked after the read, so
// a reused pid's figure is never taken for p's.
func (s *Snapshot) PSS(p *Process) (uint64, error) {
	if s.Self == 0 || p.Zombie() || p.KernelThread() {
		return 0, fmt.Errorf("pss of %d: %w", p.PID, errors.ErrUnsupported) // a fixture's, or nothing mapped
	}
	b, err := os.ReadFile(procPath(p.PID, "smaps_rollup"))
	if err != nil {
		return 0, fmt.Errorf("pss of %d: %w", p.PID, err)
	}
	if now, err := ReadStat(p.PID); err != nil || now.StartTicks != p.StartTicks {
		return 0, fmt.Errorf("pid %d: %w", p.PID, ErrGone)
	}
	return ParsePSS(b)
}

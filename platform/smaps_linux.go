package platform

import (
	"errors"
	"fmt"
	"os"
)

func (s *Snapshot) pss(p *Process) (uint64, error) {
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

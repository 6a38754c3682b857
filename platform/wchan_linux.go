package platform

import "os"

// Wchan is the kernel function p sleeps in (/proc/PID/wchan), "" when it
// is not asleep or that is not shown (kernel.kptr_restrict, no
// CONFIG_KALLSYMS: "0").
func (s *Snapshot) Wchan(p *Process) string {
	if s.Self == 0 {
		return "" // a fixture's
	}
	b, err := os.ReadFile(procPath(p.PID, "wchan"))
	if err != nil || string(b) == "0" {
		return ""
	}
	return string(b)
}

package platform

import "os"

func (s *Snapshot) wchan(p *Process) string {
	if s.Self == 0 {
		return "" // a fixture's
	}
	b, err := os.ReadFile(procPath(p.PID, "wchan"))
	if err != nil || string(b) == "0" {
		return ""
	}
	return string(b)
}

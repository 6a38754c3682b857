package platform

import (
	"os"
	"strings"
)

func (s *Snapshot) namespaceInit(p *Process) bool {
	if s.Self == 0 || p.PID == 1 || p.Zombie() || p.KernelThread() {
		return false
	}
	b, err := os.ReadFile(procPath(p.PID, "status"))
	if err != nil {
		return false
	}
	return nsInit(b)
}

// nsInit reads a status file's NSpid line: more than one pid, the last 1.
func nsInit(status []byte) bool {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			return len(f) > 1 && f[len(f)-1] == "1"
		}
	}
	return false
}

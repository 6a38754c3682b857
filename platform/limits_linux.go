package platform

import (
	"os"
	"strconv"
	"strings"
)

func (s *Snapshot) processLimit(p *Process) uint64 {
	if s.Self == 0 {
		return 0 // a fixture's: no live process to read
	}
	b, err := os.ReadFile(procPath(p.PID, "limits"))
	if err != nil {
		return 0
	}
	return parseProcessLimit(b)
}

// parseProcessLimit reads the soft limit of the "Max processes" line.
func parseProcessLimit(limits []byte) uint64 {
	for _, line := range strings.Split(string(limits), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max processes"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 || f[0] == "unlimited" {
				return 0
			}
			n, _ := strconv.ParseUint(f[0], 10, 64)
			return n
		}
	}
	return 0
}

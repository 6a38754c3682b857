package platform

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func (s *Snapshot) pidsLimit(p *Process) (limit, current uint64, path string) {
	if s.Self == 0 {
		return 0, 0, ""
	}
	b, err := os.ReadFile(procPath(p.PID, "cgroup"))
	if err != nil {
		return 0, 0, ""
	}
	var mnt, cg string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if slices.Contains(strings.Split(f[1], ","), "pids") {
			mnt, cg = "/sys/fs/cgroup/pids", f[2] // v1
			break
		}
		if f[0] == "0" && f[1] == "" {
			for _, m := range Cgroup2Mounts {
				if c, err := os.ReadFile(m + "/cgroup.controllers"); err == nil && slices.Contains(strings.Fields(string(c)), "pids") {
					mnt, cg = m, f[2]
					break
				}
			}
		}
	}
	if mnt == "" || cg == "" || cg[0] != '/' || filepath.Clean(cg) != cg {
		return 0, 0, ""
	}
	room := ^uint64(0)
	for dir := cg; ; dir = filepath.Dir(dir) {
		l, c, ok := readPIDs(mnt + dir)
		if ok && l-min(c, l) < room {
			room, limit, current, path = l-min(c, l), l, c, dir
		}
		if dir == "/" {
			break
		}
	}
	return limit, current, path
}

// readPIDs reads a cgroup's pids.max and pids.current; ok only when a
// limit is set.
func readPIDs(dir string) (limit, current uint64, ok bool) {
	b, err := os.ReadFile(dir + "/pids.max")
	if err != nil {
		return 0, 0, false
	}
	l, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, 0, false // "max"
	}
	b, err = os.ReadFile(dir + "/pids.current")
	if err != nil {
		return 0, 0, false
	}
	c, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return l, c, err == nil
}

package platform

import (
	"bytes"
)

// ParseCgroup parses /proc/PID/cgroup. Each line is
// "hierarchy-ID:controller-list:cgroup-path"; the cgroup v2 entry is always
// "0::PATH", and a v1 "name=systemd" hierarchy is how systemd tracks units on
// legacy and hybrid hosts (cgroups(7)). A path of a removed cgroup ends in
// " (deleted)", which is stripped as systemd's cg_pid_get_path does.
// Malformed lines are skipped: the file is advisory evidence, never the only
// proof for a signal.
func ParseCgroup(b []byte) Cgroup {
	var cg Cgroup
	for len(b) > 0 {
		var line []byte
		line, b = cutByte(b, '\n')
		id, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		controllers, path, ok := bytes.Cut(rest, []byte{':'})
		if !ok {
			continue
		}
		path = bytes.TrimSuffix(path, []byte(" (deleted)"))
		if len(path) == 0 || path[0] != '/' {
			continue
		}
		// Only the path that is kept is copied out of the file's bytes.
		switch {
		case string(id) == "0" && len(controllers) == 0:
			cg.Unified = string(path)
		case hasController(controllers, "name=systemd"):
			cg.Systemd = string(path)
		}
	}
	return cg
}

func hasController(list []byte, name string) bool {
	for len(list) > 0 {
		var c []byte
		c, list = cutByte(list, ',')
		if string(c) == name {
			return true
		}
	}
	return false
}

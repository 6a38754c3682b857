package platform

import (
	"bytes"
	"strings"
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
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		first := bytes.IndexByte(line, ':')
		if first < 0 {
			continue
		}
		second := bytes.IndexByte(line[first+1:], ':')
		if second < 0 {
			continue
		}
		id := string(line[:first])
		controllers := string(line[first+1 : first+1+second])
		path := strings.TrimSuffix(string(line[first+2+second:]), " (deleted)")
		if path == "" || path[0] != '/' {
			continue
		}
		switch {
		case id == "0" && controllers == "":
			cg.Unified = path
		case hasController(controllers, "name=systemd"):
			cg.Systemd = path
		}
	}
	return cg
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

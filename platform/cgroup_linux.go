package platform

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Cgroup2Mounts are where the cgroup v2 hierarchy can be mounted: on a
// hybrid host /sys/fs/cgroup/unified, on a pure v2 host /sys/fs/cgroup.
var Cgroup2Mounts = []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}

// cgroupMounts are where a cgroup path is looked up, in order: the v2
// mounts, then the v1 name=systemd hierarchy of a legacy host. The same
// path names the same unit in each.
var cgroupMounts = append(Cgroup2Mounts[:len(Cgroup2Mounts):len(Cgroup2Mounts)], "/sys/fs/cgroup/systemd")

// readCgroupProcs reads cgroup.procs of the cgroup at path.
func readCgroupProcs(path string) ([]int, error) {
	if path == "" || path[0] != '/' || filepath.Clean(path) != path {
		return nil, errors.New("cgroup path not absolute and clean")
	}
	for _, mnt := range cgroupMounts {
		b, err := os.ReadFile(mnt + path + "/cgroup.procs")
		if err != nil {
			continue
		}
		return ParseCgroupProcs(b)
	}
	return nil, os.ErrNotExist
}

// ParseCgroupProcs parses a cgroup.procs file: each member's pid once per
// line. A pid can repeat if it was recycled while the kernel wrote the list
// (cgroups(7)); callers that need a set deduplicate.
func ParseCgroupProcs(b []byte) ([]int, error) {
	var pids []int
	for _, f := range bytes.Fields(b) {
		pid, err := strconv.Atoi(string(f))
		if err != nil {
			return nil, fmt.Errorf("cgroup.procs: %q is not a pid", f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

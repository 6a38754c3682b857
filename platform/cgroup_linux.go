package platform

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
)

// cgroupMounts are where a cgroup path is looked up, in order: the v2
// hierarchy of a hybrid host, a pure v2 host, and the v1 name=systemd
// hierarchy of a legacy host. The same path names the same unit in each.
var cgroupMounts = []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/systemd"}

// readCgroupProcs reads cgroup.procs of the cgroup at path. The file lists
// each member's pid once per line; a pid can repeat if it was recycled while
// the kernel wrote the list (cgroups(7)), which is harmless for a lookup.
func readCgroupProcs(path string) ([]int, error) {
	if path == "" || path[0] != '/' || filepath.Clean(path) != path {
		return nil, errors.New("cgroup path not absolute and clean")
	}
	for _, mnt := range cgroupMounts {
		b, err := os.ReadFile(mnt + path + "/cgroup.procs")
		if err != nil {
			continue
		}
		var pids []int
		for _, line := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(line)); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids, nil
	}
	return nil, os.ErrNotExist
}

package platform

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadCmdline reads the command line of the live process pid from
// /proc/PID/cmdline (proc(5)), its first MaxDetail bytes (the process's
// owner makes it as long as their stack limit allows): empty for a kernel
// thread or a zombie.
func ReadCmdline(pid int) ([]string, error) {
	f, err := os.Open(procPath(pid, "cmdline"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxDetail))
	if err != nil {
		return nil, err
	}
	return ParseCmdline(b), nil
}

// Children is the set of the live process pid's children now. It reads
// /proc/PID/task/*/children where the kernel has it (CONFIG_PROC_CHILDREN,
// proc(5)), else the parent of every process — a container's handful, or
// a host's table.
func Children(pid int) map[int]bool {
	out := map[int]bool{}
	tasks, _ := filepath.Glob(procPath(pid, "task/*/children"))
	if len(tasks) > 0 {
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out[c] = true
				}
			}
		}
		return out
	}
	entries, _ := os.ReadDir(DefaultProcRoot)
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := ReadStat(c); err == nil && p.PPID == pid {
			out[c] = true
		}
	}
	return out
}

package platform

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func readCmdline(pid int) ([]string, error) {
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

// maxFamily bounds the processes ReadFamily walks below an init.
const maxFamily = 1 << 14

func readFamily(pid int) Family {
	f := Family{Children: map[int]bool{}}
	if _, err := os.Stat(procPath(pid, "task/"+strconv.Itoa(pid)+"/children")); err != nil {
		return familyFromTable(pid)
	}
	f.Children = Children(pid)
	queue := make([]int, 0, len(f.Children))
	for c := range f.Children {
		queue = append(queue, c)
	}
	for walked := 0; len(queue) > 0 && walked < maxFamily; walked++ {
		c := queue[0]
		queue = queue[1:]
		kids := Children(c)
		if len(kids) == 0 {
			continue
		}
		if p, err := ReadStat(c); err == nil {
			f.Parents = append(f.Parents, *p)
		}
		for k := range kids {
			queue = append(queue, k)
		}
	}
	return f
}

// familyFromTable is ReadFamily from the table's stat files.
func familyFromTable(pid int) Family {
	f := Family{Children: map[int]bool{}}
	s, err := ReadSnapshot(DefaultProcRoot)
	if err != nil {
		return f
	}
	defer s.Close()
	kids := map[int][]int{}
	for i := range s.Procs {
		kids[s.Procs[i].PPID] = append(kids[s.Procs[i].PPID], s.Procs[i].PID)
	}
	for _, c := range kids[pid] {
		f.Children[c] = true
	}
	queue := append([]int(nil), kids[pid]...)
	for walked := 0; len(queue) > 0 && walked < maxFamily; walked++ {
		c := queue[0]
		queue = queue[1:]
		if len(kids[c]) == 0 {
			continue
		}
		if p := s.Get(c); p != nil {
			f.Parents = append(f.Parents, *p)
		}
		queue = append(queue, kids[c]...)
	}
	return f
}

package platform

import (
	"os"
	"strconv"
)

// readPipeline sets s.Pipeline: the other commands of the pipeline this
// reaper runs in (`reaper reap … | grep`), found through the kernel's
// pipes — a sibling (the same parent, the shell) whose fd 0 or fd 1 is a
// pipe on the reaper's fd 0 or fd 1, and so on along the chain. Under a
// shell that is PID 1 (a container), or a subreaper, such a partner is
// "reparented" by its parent alone, and a rule that names that would end
// the reaper's own job. Only fd links are read, of the siblings alone,
// and only when the reaper's own stdin or stdout is a pipe.
func (s *Snapshot) readPipeline() {
	if s.Self == 0 {
		return
	}
	pipes := func(pid string) []uint64 {
		var out []uint64
		for _, fd := range []string{"0", "1"} {
			if link, err := os.Readlink(DefaultProcRoot + "/" + pid + "/fd/" + fd); err == nil {
				if kind, ino := parseAnonLink(link); kind == "pipe" {
					out = append(out, ino)
				}
			}
		}
		return out
	}
	queue := pipes("self")
	me := s.Get(s.Self)
	if len(queue) == 0 || me == nil {
		return
	}
	// Each sibling's pipes read once, then a walk from the reaper's own
	// over the pipes they share: linear in the siblings, however their
	// pipes chain.
	held := map[uint64][]int{} // pipe inode → the siblings on it
	links := map[int][]uint64{}
	for i := range s.Procs {
		if p := &s.Procs[i]; p.PPID == me.PPID && p.PID != s.Self && !p.Zombie() && !p.KernelThread() {
			links[p.PID] = pipes(strconv.Itoa(p.PID))
			for _, ino := range links[p.PID] {
				held[ino] = append(held[ino], p.PID)
			}
		}
	}
	seen := map[uint64]bool{}
	for _, ino := range queue {
		seen[ino] = true
	}
	for len(queue) > 0 {
		ino := queue[0]
		queue = queue[1:]
		for _, pid := range held[ino] {
			if s.Pipeline[pid] {
				continue
			}
			if s.Pipeline == nil {
				s.Pipeline = map[int]bool{}
			}
			s.Pipeline[pid] = true
			for _, other := range links[pid] {
				if !seen[other] {
					seen[other] = true
					queue = append(queue, other)
				}
			}
		}
	}
}

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
	on := map[uint64]bool{}
	for _, ino := range pipes("self") {
		on[ino] = true
	}
	me := s.Get(s.Self)
	if len(on) == 0 || me == nil {
		return
	}
	var siblings []*Process
	for i := range s.Procs {
		if p := &s.Procs[i]; p.PPID == me.PPID && p.PID != s.Self && !p.Zombie() && !p.KernelThread() {
			siblings = append(siblings, p)
		}
	}
	links := map[int][]uint64{}
	for grew := true; grew; {
		grew = false
		for _, p := range siblings {
			if s.Pipeline[p.PID] {
				continue
			}
			ps, ok := links[p.PID]
			if !ok {
				ps = pipes(strconv.Itoa(p.PID))
				links[p.PID] = ps
			}
			for _, ino := range ps {
				if on[ino] {
					if s.Pipeline == nil {
						s.Pipeline = map[int]bool{}
					}
					s.Pipeline[p.PID], grew = true, true
					for _, other := range ps {
						on[other] = true
					}
					break
				}
			}
		}
	}
}

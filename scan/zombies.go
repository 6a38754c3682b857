package scan

import (
	"sort"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// ZombieGroup is the zombies one parent has not reaped.
type ZombieGroup struct {
	ParentPID int
	Parent    *platform.Process // nil when the parent is not visible
	Zombies   []*platform.Process
	Oldest    time.Duration
	// ParentIsOwner: the parent is a live owner (a gateway not reaping its
	// children).
	ParentIsOwner bool
	// Init: the parent is PID 1, which should reap at once; zombies piling
	// up under it mean a non-reaping init (a container's PID 1 often).
	Init bool
}

// ZombieGroups groups the zombies by parent, the largest group first.
func (r *Result) ZombieGroups() []ZombieGroup {
	s := r.Tree.Snap
	byParent := map[int]*ZombieGroup{}
	var order []int
	for _, z := range r.Zombies {
		g := byParent[z.Proc.PPID]
		if g == nil {
			g = &ZombieGroup{ParentPID: z.Proc.PPID, Parent: z.Parent, Init: z.Proc.PPID == 1}
			if z.Parent != nil {
				_, g.ParentIsOwner = r.LiveOwner(z.Parent)
			}
			byParent[z.Proc.PPID] = g
			order = append(order, z.Proc.PPID)
		}
		g.Zombies = append(g.Zombies, z.Proc)
		if age := s.Age(z.Proc); age > g.Oldest {
			g.Oldest = age
		}
	}
	out := make([]ZombieGroup, 0, len(order))
	for _, ppid := range order {
		out = append(out, *byParent[ppid])
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Zombies) > len(out[j].Zombies) })
	return out
}

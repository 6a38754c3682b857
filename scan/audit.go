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
	// children — OpenClaw's scoped-child-reaper issue).
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

// PTYState is one pseudo-terminal and who holds it.
type PTYState struct {
	PTS     int
	Masters []*platform.Process
	Slaves  []*platform.Process
	// Dead: its processes can no longer be reached through it. Why says
	// which way: the master was closed (the slave's link is deleted), no
	// scanned process holds the master, or only findings hold it; or, not
	// dead, that its master is not visible from here.
	Dead bool
	Why  string
}

// PTYStates groups holds by terminal and finds the dead ones. complete
// says holds covers every process on the host: only then does "no process
// holds the master" mean what it says. inFinding tells finding members.
func PTYStates(holds map[*platform.Process][]platform.PTYHold, complete bool, inFinding func(pid int) bool) []PTYState {
	byPTS := map[int]*PTYState{}
	hungUp := map[int]bool{}
	for p, hs := range holds {
		for _, h := range hs {
			st := byPTS[h.PTS]
			if st == nil {
				st = &PTYState{PTS: h.PTS}
				byPTS[h.PTS] = st
			}
			if h.Master {
				st.Masters = append(st.Masters, p)
			} else {
				st.Slaves = append(st.Slaves, p)
				hungUp[h.PTS] = hungUp[h.PTS] || h.HungUp
			}
		}
	}
	out := make([]PTYState, 0, len(byPTS))
	for n, st := range byPTS {
		byPID := func(ps []*platform.Process) {
			sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
		}
		byPID(st.Masters)
		byPID(st.Slaves)
		onlyFindings := len(st.Masters) > 0
		for _, m := range st.Masters {
			onlyFindings = onlyFindings && inFinding(m.PID)
		}
		switch {
		case len(st.Slaves) == 0:
		case hungUp[n]:
			st.Dead, st.Why = true, "its master was closed: the holder died or let go, the slave is hung up"
		case complete && len(st.Masters) == 0:
			st.Dead, st.Why = true, "no live process holds its master"
		case len(st.Masters) == 0:
			st.Why = "master not visible: no process this scan can see holds it (another PID namespace, or fds it could not read); not known to be dead"
		case onlyFindings:
			st.Dead, st.Why = true, "only findings hold its master"
		}
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PTS < out[j].PTS })
	return out
}

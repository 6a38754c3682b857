package audit

import (
	"sort"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// PTYRef is a pseudo-terminal a finding's process holds.
type PTYRef struct {
	PTS    int    `json:"pts"`
	Role   string `json:"role"` // "master" or "slave"
	PID    int    `json:"pid"`
	HungUp bool   `json:"hung_up"`
}

// DeadPTY is a pseudo-terminal whose processes can't be reached through it.
type DeadPTY struct {
	PTS     int    `json:"pts"`
	Why     string `json:"why"`
	Masters []int  `json:"masters"`
	Slaves  []int  `json:"slaves"`
}

// Activity is the evidence that a run-done tree kept working after its
// run's end: the zombie-session bug, not just a leftover.
type Activity struct {
	ActiveAfterDone  bool       `json:"active_after_done"`
	EndedAt          time.Time  `json:"ended_at"`
	StartedSinceDone int        `json:"processes_started_since_done"`
	CPUTicks         uint64     `json:"cpu_ticks"`
	CPUTicksDelta    uint64     `json:"cpu_ticks_delta"`
	WrittenDelta     uint64     `json:"written_bytes_delta"`
	SampleMillis     int64      `json:"sample_ms"`
	TTYWrittenAt     *time.Time `json:"tty_written_at,omitempty"`
	Evidence         []string   `json:"evidence"`
}

// ZombieGroupEntry is the zombies of one parent.
type ZombieGroupEntry struct {
	ParentPID       int    `json:"parent_pid"`
	ParentStart     string `json:"parent_start"`
	ParentCmdline   string `json:"parent_cmdline"`
	ParentIsOwner   bool   `json:"parent_is_owner"`
	Init            bool   `json:"init"`
	Count           int    `json:"count"`
	OldestAgeSecond int64  `json:"oldest_age_seconds"`
	PIDs            []int  `json:"pids"`
	// UserProcesses and ProcessLimit, for a group of ZombieLimitAt or
	// more: how close the parent's user is to its process limit
	// (RLIMIT_NPROC), which zombies count against: at it, fork fails.
	UserProcesses int    `json:"user_processes,omitempty"`
	ProcessLimit  uint64 `json:"process_limit,omitempty"`
	// PIDsMax, PIDsCurrent and PIDsCgroup, for such a group: the tightest
	// pids controller limit over the parent's cgroup and its ancestors (a
	// user's slice's TasksMax), its count of tasks and the cgroup.
	PIDsMax     uint64 `json:"pids_max,omitempty"`
	PIDsCurrent uint64 `json:"pids_current,omitempty"`
	PIDsCgroup  string `json:"pids_cgroup,omitempty"`
}

// ZombieLimitAt is the size of a zombie group whose parent's user's
// process limit is read and said.
const ZombieLimitAt = 10

// setPTYs records what the findings' processes hold (their open fds; where
// those can't be read, the terminal the snapshot knows) and the dead PTYs.
func (r *Report) setPTYs(holds map[*platform.Process][]platform.PTYHold, states []scan.PTYState) {
	held := map[int]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		f.PTYs = []PTYRef{}
		fromFDs := map[int]bool{}
		for _, proc := range f.procs {
			for _, h := range holds[proc] {
				role := "slave"
				if h.Master {
					role = "master"
				}
				f.PTYs = append(f.PTYs, PTYRef{PTS: h.PTS, Role: role, PID: proc.PID, HungUp: h.HungUp})
				fromFDs[proc.PID] = true
			}
		}
		for _, t := range f.terminals {
			if !fromFDs[t.PID] {
				f.PTYs = append(f.PTYs, t)
			}
		}
		for _, p := range f.PTYs {
			held[p.PTS] = true
		}
	}
	r.PTY.HeldByFindings = len(held)
	r.PTY.Dead = []DeadPTY{}
	for _, st := range states {
		if st.Dead {
			r.PTY.Dead = append(r.PTY.Dead, DeadPTY{PTS: st.PTS, Why: st.Why, Masters: pids(st.Masters), Slaves: pids(st.Slaves)})
		}
	}
}

func pids(ps []*platform.Process) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	sort.Ints(out)
	return out
}

func zombieGroups(s *platform.Snapshot, gs []scan.ZombieGroup) []ZombieGroupEntry {
	out := []ZombieGroupEntry{}
	for _, g := range gs {
		e := ZombieGroupEntry{ParentPID: g.ParentPID, ParentIsOwner: g.ParentIsOwner, Init: g.Init,
			Count: len(g.Zombies), OldestAgeSecond: int64(g.Oldest / time.Second), PIDs: pids(g.Zombies)}
		if g.Parent != nil {
			e.ParentStart = s.Identity(g.Parent)
			e.ParentCmdline = commandLine(s, g.Parent)
			if e.Count >= ZombieLimitAt {
				e.ProcessLimit = s.ProcessLimit(g.Parent)
				e.UserProcesses = userProcesses(s, s.UID(g.Parent))
				e.PIDsMax, e.PIDsCurrent, e.PIDsCgroup = s.PIDsLimit(g.Parent)
			}
		}
		out = append(out, e)
	}
	return out
}

// userProcesses counts uid's processes in s, zombies included; a zombie
// counts as its parent's user's, who holds it.
func userProcesses(s *platform.Snapshot, uid uint32) int {
	s.Owners()
	n := 0
	for i := range s.Procs {
		if countedAs(s, &s.Procs[i]) == uid {
			n++
		}
	}
	return n
}

// countedAs is the user a process counts against: its /proc entry's
// owner (Snapshot.Owner), or for a zombie its parent's.
func countedAs(s *platform.Snapshot, p *platform.Process) uint32 {
	if p.Zombie() {
		if pp := s.Get(p.PPID); pp != nil {
			return s.Owner(pp)
		}
	}
	return s.Owner(p)
}

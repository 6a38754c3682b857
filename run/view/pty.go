package view

import (
	"os"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// PTYs is every pseudo-terminal in use on the pass's table, who holds it,
// and which are dead: the one view that reads every process's fds. A PTY
// only the pass's findings hold the master of is dead.
func PTYs(p *run.Pass) *audit.PTYView {
	s, plan := p.Snap, p.Plan
	member := map[int]bool{}
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			member[m.Proc.PID] = true
		}
	}
	holds := map[*platform.Process][]platform.PTYHold{}
	unreadable := 0
	for i := range s.Procs {
		pr := &s.Procs[i]
		if pr.KernelThread() || pr.Zombie() {
			continue
		}
		h, err := s.PTYHolds(pr)
		if err != nil {
			unreadable++
			continue
		}
		if len(h) > 0 {
			holds[pr] = h
		}
	}
	// Every holder is seen only when every process's fds were read, in the
	// host's PID namespace.
	scope := scan.AllProcesses
	if unreadable > 0 || !host.HostPIDNamespace() {
		scope = scan.Incomplete
	}
	states := scan.PTYStates(holds, scope, func(pid int) bool { return member[pid] })
	out := &audit.PTYView{SchemaVersion: 1, InUse: s.PTY.InUse, Max: s.PTY.Max, PTYs: []audit.PTYEntry{}, Dead: []int{},
		Unreadable: unreadable, AsRoot: os.Geteuid() == 0}
	toHolders := func(ps []*platform.Process) []audit.PTYHolder {
		hs := []audit.PTYHolder{}
		for _, pr := range ps {
			hs = append(hs, audit.PTYHolder{PID: pr.PID, Cmdline: audit.CommandLine(s, pr), InFinding: member[pr.PID]})
		}
		return hs
	}
	for _, st := range states {
		out.PTYs = append(out.PTYs, audit.PTYEntry{PTS: st.PTS, Dead: st.Dead, Why: st.Why, Masters: toHolders(st.Masters), Slaves: toHolders(st.Slaves)})
		if st.Dead {
			out.Dead = append(out.Dead, st.PTS)
		}
	}
	return out
}

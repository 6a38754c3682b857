package scan

import (
	"sort"

	"github.com/orphanreaper/reaper/platform"
)

// PTYState is one pseudo-terminal and who holds it.
type PTYState struct {
	PTS     int
	Masters []*platform.Process
	Slaves  []*platform.Process
	// Dead: its processes can no longer be reached through it. Why says
	// which way — the master was closed (the slave's link is deleted), or
	// only findings hold it — or, not dead, where its master is when no
	// process read holds it.
	Dead bool
	Why  string
}

// PTYScope is whose fds a PTYStates call was given: what it means that no
// process read holds a terminal's master.
type PTYScope int

const (
	// FindingsOnly: the findings' processes' fds (scan and reap read no
	// others).
	FindingsOnly PTYScope = iota
	// Incomplete: every process's, but some could not be read, or the
	// table is not the host's PID namespace (a container: the terminal
	// one types in has its master outside).
	Incomplete
	// AllProcesses: every process on the host.
	AllProcesses
)

// PTYStates groups holds by terminal and finds the dead ones, the same
// way whatever scope the holds cover: a terminal is dead when its master
// was closed — never because findings alone hold its master: their
// holder lives, and is what the policy judges. A slave whose link is not
// "(deleted)" has an open master — devpts removes the slave's node when
// the last master fd closes (drivers/tty/pty.c, pty_close →
// devpts_pty_kill) — so a master no process read holds is somewhere
// else, never proof of death; scope says where, in Why. inFinding tells
// finding members.
func PTYStates(holds map[*platform.Process][]platform.PTYHold, scope PTYScope, inFinding func(pid int) bool) []PTYState {
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
		case len(st.Masters) == 0 && scope == FindingsOnly:
			st.Why = "its master is open, held outside the findings ('reaper pty' names who holds it)"
		case len(st.Masters) == 0 && scope == Incomplete:
			st.Why = "master not visible: it is open, held by a process this run cannot see (another PID namespace, or fds it could not read)"
		case len(st.Masters) == 0:
			st.Why = "its master is open but no process holds it: a descriptor in flight over a unix socket"
		case onlyFindings:
			// Not dead: its master's holder lives and may read it (a tmux
			// or screen server a broad rule took is one). It goes when
			// the findings go; whether they should is the policy's call.
			st.Why = "only findings hold its master: it is live while they are, and ends with them"
		}
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PTS < out[j].PTS })
	return out
}

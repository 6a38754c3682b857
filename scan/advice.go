package scan

import (
	"sort"

	"github.com/orphanreaper/reaper/ledger"

	"github.com/orphanreaper/reaper/platform"
)

// Advice is configuration the operator should change, with the evidence
// for it and the exact setting: the leaks under a live gateway are not
// orphans, and the cure is in the client's config as often as in a kill.
type Advice struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // info, warning
	Evidence string `json:"evidence"`
	Setting  string `json:"setting"`
}

// Activity is what a sampler saw of one process over a short window.
type Activity struct {
	Bytes    uint64 // read and written through syscalls (rchar + wchar)
	Switches uint64 // voluntary context switches
}

// Sampler measures processes over a short window; it returns, per pid, the
// activity of those it could read. CPU ticks tell nothing here — they were
// 0 for busy and idle MCP trees alike — so it is bytes moved and waits.
type Sampler func(procs []*platform.Process) map[int]Activity

// Advise asks each adviser for its advice over the final findings, in ID
// order, and adds its own on server sets under live clients (sets.go). sample, when not nil, is theirs to measure activity with.
func (r *Result) Advise(advisers []Adviser, sample Sampler) {
	advisers = append(advisers[:len(advisers):len(advisers)], serverSets{servers: r.servers, sessions: r.sessions})
	for _, a := range advisers {
		r.Advice = append(r.Advice, a.Advise(r, sample)...)
	}
	sort.SliceStable(r.Advice, func(i, j int) bool { return r.Advice[i].ID < r.Advice[j].ID })
}

// Running is the index of the process l names when it lives and is the
// process l names (OwnerGone: its start time where l has one, its user
// speaker's or root's), else -1.
func (r *Result) Running(l ledger.Owner, speaker uint32) int {
	if l.PID <= 0 || l.Gone != "" {
		return -1
	}
	s := r.Tree.Snap
	if gone, _ := OwnerGone(s, RecordedBy(speaker, l.PID, l.Start)); gone {
		return -1
	}
	return s.Index(l.PID)
}

// Under reports whether the process at index i descends from index anc.
func (t *Tree) Under(i, anc int) bool {
	found := false
	if i < 0 {
		return false
	}
	t.Ancestors(i, func(j int) bool {
		found = j == anc
		return !found
	})
	return found
}

// UnderAny reports whether the process at index i is one of pids or
// descends from one.
func (t *Tree) UnderAny(i int, pids map[int]bool) bool {
	if len(pids) == 0 {
		return false
	}
	found := pids[t.Snap.Procs[i].PID]
	t.Ancestors(i, func(j int) bool {
		found = found || pids[t.Snap.Procs[j].PID]
		return !found
	})
	return found
}

package reap

import (
	"strings"
	"syscall"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// check applies the caller's refusals to a process a rescan found.
func (t *tree) check(s *platform.Snapshot, p *platform.Process) string {
	if t.opt.Check == nil {
		return ""
	}
	return t.opt.Check(s, p)
}

// wait waits up to d for every handle's process to be gone.
func (t *tree) wait(d time.Duration) {
	deadline := time.Now().Add(d)
	if !t.opt.Deadline.IsZero() && t.opt.Deadline.Before(deadline) {
		deadline = t.opt.Deadline
	}
	for _, h := range t.handles {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		h.WaitGone(left)
	}
}

// alive returns the handles whose process has not exited.
func (t *tree) alive() []*platform.Handle {
	var out []*platform.Handle
	for _, h := range t.handles {
		if !h.WaitGone(0) {
			out = append(out, h)
		}
	}
	return out
}

// resume continues the processes a refused tree had stopped: refusing must
// leave them as they were.
func (t *tree) resume() {
	for _, h := range t.handles {
		t.send(h, syscall.SIGCONT)
	}
}

func (t *tree) close() {
	for _, h := range t.handles {
		h.Close()
	}
}

// pids is every process of the tree: those handled and those found gone.
func (t *tree) pids() []int {
	out := append([]int(nil), t.gone...)
	for _, h := range t.handles {
		out = append(out, h.PID)
	}
	return out
}

// pidfdNote says so when signals could not go through pidfds (SPEC §9.2).
func (t *tree) pidfdNote() string {
	for _, h := range t.handles {
		if !h.Pidfd() {
			return "no pidfd on this kernel: identity re-checked before each kill(2), min_age guards the rest"
		}
	}
	return ""
}

func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

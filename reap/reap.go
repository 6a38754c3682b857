package reap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Options bound and equip a run.
type Options struct {
	// Grace is how long SIGTERM has before SIGKILL.
	Grace time.Duration
	// DryRun sends only signal 0, to check the action would be permitted.
	DryRun bool
	// ProcRoot is where rescans read the process table.
	ProcRoot string
	// MaxRescans bounds the stop-and-rescan loop of one tree.
	MaxRescans int
	// KillWait is how long a process has to die after SIGKILL before it is
	// reported failed (a process in uninterruptible sleep, state D).
	KillWait time.Duration
	// Deadline bounds the whole run.
	Deadline time.Time
	// Guard is the seam's guard: live owners, protected processes.
	Guard *platform.Guard
	// Check refuses a process a rescan found in a tree ("" allows it): the
	// policy's protect rules and live owners, for processes the plan never saw.
	Check func(s *platform.Snapshot, p *platform.Process) string
	// OnSignal is called for every signal sent, with its result.
	OnSignal func(Event)

	// send is the signal seam, replaceable in tests to simulate a process
	// that cannot die; killCgroup is its unit form.
	send       func(h *platform.Handle, sig syscall.Signal) error
	killCgroup func(g *platform.Guard, path string, members []*platform.Handle) ([]platform.Target, error)
}

// Event is one signal sent, for the audit log.
type Event struct {
	Time    time.Time
	RootPID int
	PID     int
	Start   string // the process's start identity
	Signal  string
	Via     string // "cgroup.kill PATH" when the signal went to a cgroup as a unit
	Result  string // "ok", "gone", or why not
}

// Result is what became of one plan item.
type Result struct {
	Outcome policy.Outcome
	Detail  string
	// PIDs is every process the action covered, the tree as the rescans
	// found it.
	PIDs []int
	// Permission is set when the kernel refused a signal (EPERM).
	Permission bool
}

// Execute carries out the plan's items that signal. Items that report, or
// that the plan refused, keep their outcome. The result is index-aligned
// with plan.Items.
func Execute(ctx context.Context, plan *policy.Plan, snap *platform.Snapshot, opt Options) []Result {
	if opt.send == nil {
		opt.send = (*platform.Handle).Signal
	}
	if opt.killCgroup == nil {
		opt.killCgroup = (*platform.Guard).KillCgroup
	}
	if opt.MaxRescans <= 0 {
		opt.MaxRescans = 16
	}
	if opt.KillWait <= 0 {
		opt.KillWait = 2 * time.Second
	}
	out := make([]Result, len(plan.Items))
	for i, it := range plan.Items {
		out[i] = Result{Outcome: it.Outcome, Detail: it.Detail, PIDs: it.Finding.PIDs()}
		if it.Outcome != policy.Planned {
			continue
		}
		if err := ctx.Err(); err != nil || !opt.Deadline.IsZero() && time.Now().After(opt.Deadline) {
			out[i] = Result{Outcome: policy.Failed, Detail: "the run's time ran out before this tree", PIDs: out[i].PIDs}
			continue
		}
		t := &tree{opt: &opt, snap: snap, root: it.Finding.Root.PID, kill: it.Action == policy.Kill}
		out[i] = t.reap(ctx, it.Finding)
	}
	return out
}

// tree is the reaping of one finding.
type tree struct {
	opt       *Options
	snap      *platform.Snapshot
	root      int
	kill      bool // SIGKILL straight away, no SIGTERM
	handles   []*platform.Handle
	gone      []int
	ids       map[int]string // pid → start identity, for the audit log
	refusal   string         // why a rescan refused the tree
	delivered bool           // a SIGTERM or SIGKILL reached a live process
}

func (t *tree) reap(ctx context.Context, f *scan.Finding) Result {
	defer t.close()
	t.ids = map[int]string{}
	for _, m := range f.Members {
		if r, stop := t.open(t.snap, m.Proc); stop {
			return r
		}
	}
	if len(t.handles) == 0 {
		return Result{Outcome: policy.Gone, Detail: "every process had exited already", PIDs: t.gone}
	}
	if t.opt.DryRun {
		for _, h := range t.handles {
			if r, stop := t.send(h, 0); stop {
				return r
			}
		}
		return Result{Outcome: policy.Planned, Detail: t.pidfdNote(), PIDs: t.pids()}
	}
	note, refused := t.stopAndRescan(ctx, t.handles)
	if refused != nil {
		t.resume()
		return *refused
	}
	if !t.kill {
		for _, h := range t.handles {
			if r, stop := t.send(h, syscall.SIGTERM); stop {
				t.resume()
				return r
			}
			t.send(h, syscall.SIGCONT) // a stopped process acts on SIGTERM only once continued
		}
		t.wait(t.opt.Grace)
		if left := t.alive(); len(left) > 0 {
			// What outlived SIGTERM ran during grace and may have forked:
			// stop it again and take in its new children before SIGKILL.
			again, refused := t.stopAndRescan(ctx, left)
			if refused != nil {
				t.resume()
				return *refused
			}
			note = joinNotes(note, again)
		}
	}
	left := t.alive()
	units, cgNote := t.killCgroups(left)
	note = joinNotes(note, cgNote)
	for _, h := range left {
		if !units.covers(h.PID) {
			t.send(h, syscall.SIGKILL)
		}
	}
	t.wait(t.opt.KillWait)
	if left := t.alive(); len(left) > 0 {
		detail := ""
		for _, h := range left {
			detail += fmt.Sprintf("pid %d survived SIGKILL (state %s); ", h.PID, h.State())
		}
		return Result{Outcome: policy.Failed, Detail: detail + note, PIDs: t.pids()}
	}
	if still := units.populated(t.opt.KillWait); len(still) > 0 {
		return Result{Outcome: policy.Failed, Detail: joinNotes("cgroup "+strings.Join(still, ", ")+" still holds live processes after cgroup.kill", note), PIDs: t.pids()}
	}
	if !t.delivered {
		return Result{Outcome: policy.Gone, Detail: joinNotes("every process exited before a signal reached it", note), PIDs: t.pids()}
	}
	return Result{Outcome: policy.Killed, Detail: joinNotes(note, t.pidfdNote()), PIDs: t.pids()}
}

// open opens a verified handle on p. A process that is gone is noted; one
// that is another process now is left alone; a refusal stops the tree.
func (t *tree) open(s *platform.Snapshot, p *platform.Process) (Result, bool) {
	h, err := platform.Open(platform.Target{PID: p.PID, StartTicks: p.StartTicks}, t.opt.Guard)
	t.ids[p.PID] = s.Identity(p)
	switch {
	case err == nil:
		t.handles = append(t.handles, h)
	case errors.Is(err, platform.ErrGone):
		t.gone = append(t.gone, p.PID)
	case errors.Is(err, platform.ErrIdentity) && p.PID == t.root:
		return Result{Outcome: policy.Refused, Detail: "pid-reused: " + err.Error(), PIDs: t.pids()}, true
	case errors.Is(err, platform.ErrIdentity):
		// A descendant's pid names another process now: not this tree's.
	case errors.Is(err, platform.ErrRefused):
		return Result{Outcome: policy.Refused, Detail: err.Error(), PIDs: t.pids()}, true
	default:
		return Result{Outcome: policy.Failed, Detail: err.Error(), PIDs: t.pids()}, true
	}
	return Result{}, false
}

// send signals through the seam, records the event, and says whether the
// tree must stop here (a refusal or no permission).
func (t *tree) send(h *platform.Handle, sig syscall.Signal) (Result, bool) {
	err := t.opt.send(h, sig)
	ev := Event{Time: time.Now().UTC(), RootPID: t.root, PID: h.PID, Start: t.ids[h.PID], Signal: platform.SignalName(sig), Result: "ok"}
	defer func() { t.emit(ev) }()
	switch {
	case err == nil:
		t.delivered = t.delivered || sig == syscall.SIGTERM || sig == syscall.SIGKILL
		return Result{}, false
	case errors.Is(err, platform.ErrGone):
		ev.Result = "gone"
		return Result{}, false
	case errors.Is(err, platform.ErrPermission):
		ev.Result = "no permission"
		return Result{Outcome: policy.Refused, Detail: err.Error(), PIDs: t.pids(), Permission: true}, true
	case errors.Is(err, platform.ErrRefused), errors.Is(err, platform.ErrIdentity):
		ev.Result = "refused: " + err.Error()
		return Result{Outcome: policy.Refused, Detail: err.Error(), PIDs: t.pids()}, true
	}
	ev.Result = "error: " + err.Error()
	return Result{Outcome: policy.Failed, Detail: err.Error(), PIDs: t.pids()}, true
}

// emit records one signal sent.
func (t *tree) emit(ev Event) {
	if t.opt.OnSignal != nil {
		t.opt.OnSignal(ev)
	}
}

// stopAndRescan stops the given members, then rereads the process table
// and adds (and stops) the children of any member that appeared, until
// none does: a tree cannot escape by forking while it is being killed. It
// returns a note when the bound was reached, or a refusal when a new
// member may not be touched.
func (t *tree) stopAndRescan(ctx context.Context, members []*platform.Handle) (string, *Result) {
	toStop := members
	for round := 0; ; round++ {
		for _, h := range toStop {
			if r, stop := t.send(h, syscall.SIGSTOP); stop {
				return "", &r
			}
		}
		stopped := len(t.handles)
		if round == t.opt.MaxRescans || ctx.Err() != nil {
			return fmt.Sprintf("new processes still appeared after %d rescans", round), nil
		}
		s, err := platform.ReadSnapshot(t.opt.ProcRoot)
		if err != nil {
			return "rescan failed: " + err.Error(), nil
		}
		added := t.newMembers(s)
		s.Close()
		if added < 0 {
			return "", &Result{Outcome: policy.Refused, Detail: t.refusal, PIDs: t.pids()}
		}
		if added == 0 {
			return "", nil
		}
		toStop = t.handles[stopped:]
	}
}

// newMembers opens handles on children of members that are not members
// yet; -1 when one is refused.
func (t *tree) newMembers(s *platform.Snapshot) int {
	tr := scan.NewTree(s)
	known := map[int]bool{}
	for _, h := range t.handles {
		known[h.PID] = true
	}
	added := 0
	for _, h := range slices.Clone(t.handles) {
		i := s.Index(h.PID)
		if i < 0 {
			continue
		}
		for _, k := range tr.Children(i) {
			c := &s.Procs[k]
			if known[c.PID] || c.Zombie() {
				continue
			}
			if why := t.check(s, c); why != "" {
				t.refusal = fmt.Sprintf("pid %d appeared in the tree: %s", c.PID, why)
				return -1
			}
			known[c.PID] = true
			if r, stop := t.open(s, c); stop {
				t.refusal = r.Detail
				return -1
			}
			added++
		}
	}
	return added
}

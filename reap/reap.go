package reap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
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
	// SettleWait is how long a tree rooted at one of a client's supervisor
	// processes (scan.Finding.Supervisor) is left to finish its own
	// cleanup before the reaper acts (default 6 s: the supervisors the
	// adapters mark kill what they track within about 5 s of losing their
	// owner).
	SettleWait time.Duration
	// Deadline bounds the whole run.
	Deadline time.Time
	// Guard is the seam's guard: live owners, protected processes.
	Guard *kill.Guard
	// Admit decides whether a process may be signalled for a plan item
	// ("" allows it). Every process is asked once it is stopped, with what
	// a fresh read of the process table says of it: the planned members
	// and every process a rescan finds in the tree. When nil, the plan's
	// Gate decides (policy.Gate.Admit); a plan with neither is refused.
	Admit func(s *platform.Snapshot, p *platform.Process, it *policy.Item) string
	// OnSignal is called for every signal sent, with its result.
	OnSignal func(Event)
	// Journal, when set, is told before each process is stopped and each
	// member moved into a confinement, so that a run that dies mid-reap
	// (SIGKILL, the OOM killer) leaves a record from which the next run
	// resumes or releases what it left (run.StopLog): a tree reaper
	// stopped is never left stopped.
	Journal Journal
	// OnProgress, when set, is told what the reap is doing to each tree,
	// for a person watching: when SIGTERM has been sent, about once a
	// second through the grace, and when the tree is done.
	OnProgress func(Progress)

	// send is the signal seam, replaceable in tests to simulate a process
	// that cannot die; killCgroup is its unit form; confine makes the
	// cgroup a stopped tree is moved into (nil result: per-pid path).
	send       func(h *kill.Handle, sig kill.Signal) error
	killCgroup func(g *kill.Guard, path string, members []*kill.Handle) ([]kill.Target, error)
	confine    func(g *kill.Guard, name string) (*kill.Confinement, error)
}

// Journal is where a reap writes down what it is about to stop or
// confine, before it does.
type Journal interface {
	// Stopping: the process pid, started at start (clock ticks), is about
	// to be sent SIGSTOP.
	Stopping(pid int, start uint64)
	// Confining: a confinement is made at cgroup path.
	Confining(path string)
	// Moving: the process is about to be moved into the confinement at
	// path from the cgroup from.
	Moving(path string, pid int, start uint64, from string)
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

// Progress is what a reap is doing to one tree.
type Progress struct {
	RootPID int
	// Step is "grace" (SIGTERM sent, waiting for the tree to exit) or
	// "done" (Outcome says how it ended).
	Step    string
	Outcome policy.Outcome
	// Left of Total processes are alive, with Remaining of the grace.
	Left, Total int
	Remaining   time.Duration
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
		opt.send = (*kill.Handle).Signal
	}
	if opt.killCgroup == nil {
		opt.killCgroup = (*kill.Guard).KillCgroup
	}
	if opt.confine == nil {
		opt.confine = (*kill.Guard).Confine
	}
	if opt.Admit == nil && plan.Gate != nil {
		opt.Admit = func(s *platform.Snapshot, p *platform.Process, it *policy.Item) string {
			return plan.Gate.Admit(s, p, it.Rule, it.Finding)
		}
	}
	if opt.MaxRescans <= 0 {
		opt.MaxRescans = 16
	}
	if opt.KillWait <= 0 {
		opt.KillWait = 2 * time.Second
	}
	if opt.SettleWait <= 0 {
		opt.SettleWait = 6 * time.Second
	}
	out := make([]Result, len(plan.Items))
	done := func(i int, t *tree, r Result) {
		t.close()
		out[i] = r
		if opt.OnProgress != nil {
			opt.OnProgress(Progress{RootPID: t.root, Step: "done", Outcome: r.Outcome, Total: len(r.PIDs)})
		}
	}
	// The trees in their grace, in the order they were sent SIGTERM: the
	// graces run side by side, so that n trees that ignore SIGTERM cost
	// one grace, not n (each still gets its whole grace, from its own
	// SIGTERM).
	type inGrace struct {
		i    int
		t    *tree
		note string
	}
	var graces []inGrace
	for i, it := range plan.Items {
		out[i] = Result{Outcome: it.Outcome, Detail: it.Detail, PIDs: it.Finding.PIDs()}
		if it.Outcome != policy.Planned {
			continue
		}
		if opt.Admit == nil {
			out[i] = Result{Outcome: policy.Refused, Detail: "no gate to check the processes against: nothing signalled", PIDs: out[i].PIDs}
			continue
		}
		if ctx.Err() != nil || !opt.Deadline.IsZero() && time.Now().After(opt.Deadline) {
			out[i] = Result{Outcome: stoppedOutcome(ctx), Detail: stopped(ctx) + " before this tree: nothing signalled", PIDs: out[i].PIDs}
			continue
		}
		t := &tree{opt: &opt, snap: snap, item: &plan.Items[i], root: it.Finding.Root.PID}
		r, note := t.start(ctx, it.Finding)
		if r != nil {
			done(i, t, *r)
			continue
		}
		graces = append(graces, inGrace{i, t, note})
	}
	for _, g := range graces {
		done(g.i, g.t, g.t.end(ctx, g.note))
	}
	return out
}

// stoppedOutcome is the outcome of a tree the run stopped early:
// interrupted for an interrupt (the caller's context canceled: a SIGINT,
// a SIGTERM), failed for its deadline — the one word reap, watch and run
// record for an interrupt.
func stoppedOutcome(ctx context.Context) policy.Outcome {
	if errors.Is(ctx.Err(), context.Canceled) {
		return policy.Interrupted
	}
	return policy.Failed
}

// stopped says why the run stopped early: an interrupt, or its deadline.
func stopped(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.Canceled) {
		return "the run was interrupted"
	}
	return "the run's time ran out"
}

// tree is the reaping of one finding.
type tree struct {
	opt       *Options
	snap      *platform.Snapshot
	item      *policy.Item
	root      int
	handles   []*kill.Handle
	starts    map[int]uint64 // pid → start ticks of every handle
	gone      []int
	ids       map[int]string // pid → start identity, for the audit log
	refusal   string         // why a rescan refused the tree
	delivered bool           // a SIGTERM or SIGKILL reached a live process
	// groups are the sessions and process groups that held only the tree
	// and what it forked, at any rescan: a process found in one later was
	// forked by the tree.
	groups      map[int]bool
	termed      time.Time // when SIGTERM was sent: the grace runs from it
	conf        *kill.Confinement
	releaseNote string // why a confinement given up was not fully released
	// apart are the processes below the root the scan found not the
	// tree's (scan.Finding.Apart), pid → start: never members, never
	// followed, and not escapees once adopted.
	apart map[int]uint64
}

// start reaps the tree up to its grace: proved handles on every member,
// the tree stopped, rescanned and confined, then SIGTERM. It returns the
// result when the reap ended before the grace (refused, gone, a dry run,
// a kill without SIGTERM), else nil and the notes so far: the tree is in
// its grace, and end finishes it. The caller closes the tree.
func (t *tree) start(ctx context.Context, f *scan.Finding) (*Result, string) {
	t.begin(f)
	if r := t.openAll(f); r != nil {
		return r, ""
	}
	if t.opt.DryRun {
		r := t.dryRun(f)
		return &r, ""
	}
	note, r := t.stop(ctx, f)
	if r != nil {
		return r, ""
	}
	if t.item.Action == policy.Kill { // SIGKILL straight away, no SIGTERM
		r := t.finish(note)
		return &r, ""
	}
	if r := t.sigterm(); r != nil {
		return r, ""
	}
	return nil, note
}

// end waits out what is left of the tree's grace, then finishes its reap.
func (t *tree) end(ctx context.Context, note string) Result {
	note, r := t.afterGrace(ctx, note)
	if r != nil {
		return *r
	}
	return t.finish(note)
}

// begin records what the reap starts from: the root's adopter and user,
// when the scan's table was taken, and the processes below the root that
// the scan found not the tree's.
func (t *tree) begin(f *scan.Finding) {
	t.ids = map[int]string{}
	t.starts = map[int]uint64{}
	t.apart = map[int]uint64{}
	for _, p := range f.Apart {
		t.apart[p.PID] = p.StartTicks
	}
}

// openAll opens a proven handle on every member. A refusal ends the reap;
// a tree that has already exited is gone.
func (t *tree) openAll(f *scan.Finding) *Result {
	for _, m := range f.Members {
		if r, stop := t.open(t.snap, m.Proc); stop {
			return &r
		}
	}
	if len(t.handles) == 0 {
		return &Result{Outcome: policy.Gone, Detail: "every process had exited already", PIDs: t.gone}
	}
	return nil
}

// dryRun sends signal 0 to every member: would each signal be permitted.
func (t *tree) dryRun(f *scan.Finding) Result {
	for _, h := range t.handles {
		if r, stop := t.send(h, 0); stop {
			return r
		}
	}
	return Result{Outcome: policy.Planned, Detail: joinNotes(settleNote(f), t.pidfdNote()), PIDs: t.pids()}
}

// stop lets a client's supervisor settle first, stops the tree and
// rescans it until nothing new appears, then confines it where the kernel
// lets the reaper — and takes in what it forked between its last rescan
// and the move (a process SIGCONTed by someone else may have run; once
// inside, what a process forks is born inside). It returns the notes so
// far, or the result that ends the reap, with everything stopped
// continued.
func (t *tree) stop(ctx context.Context, f *scan.Finding) (string, *Result) {
	settled := ""
	if f.Supervisor != "" {
		r, done := t.settle(ctx, f)
		if done {
			return "", &r
		}
		settled = r.Detail
	}
	note, refused := t.stopAndRescan(ctx, t.handles)
	note = joinNotes(settled, note)
	if refused != nil {
		t.resume()
		return "", refused
	}
	note = joinNotes(note, t.confineTree())
	if t.conf != nil {
		before := len(t.handles)
		again, refused := t.stopAndRescan(ctx, nil)
		if refused != nil {
			t.resume()
			return "", refused
		}
		for _, h := range t.handles[before:] {
			t.conf.Move(h)
		}
		note = joinNotes(note, again)
	}
	if ctx.Err() != nil {
		t.resume()
		return "", &Result{Outcome: stoppedOutcome(ctx), Detail: joinNotes(stopped(ctx)+" before SIGTERM: the stopped processes were continued", note, t.releaseNote), PIDs: t.pids()}
	}
	return note, nil
}

// sigterm sends SIGTERM and SIGCONT to every member (a stopped process
// acts on SIGTERM only once continued); the grace starts. A server its live
// client superseded is sent SIGINT first, at its root alone, as a client's
// own replace path stops one; SIGTERM follows.
func (t *tree) sigterm() *Result {
	if t.item.Finding.Has(scan.Superseded) {
		for _, h := range t.handles {
			if h.PID == t.root {
				if r, stop := t.send(h, kill.Interrupt); stop {
					t.resume()
					return &r
				}
			}
		}
	}
	for _, h := range t.handles {
		if r, stop := t.send(h, kill.Term); stop {
			t.resume()
			return &r
		}
		t.send(h, kill.Continue)
	}
	t.termed = time.Now()
	return nil
}

// afterGrace waits out what is left of the grace since sigterm. What
// outlived it outside a confinement ran during the grace and may have
// forked: it is stopped again and its new children taken in before
// SIGKILL (inside one, its forks are there already).
func (t *tree) afterGrace(ctx context.Context, note string) (string, *Result) {
	t.wait(ctx, time.Until(t.termed.Add(t.opt.Grace)), t.opt.OnProgress)
	if ctx.Err() != nil {
		t.release()
		return "", &Result{Outcome: stoppedOutcome(ctx), Detail: joinNotes(stopped(ctx)+" during grace: SIGTERM sent, the tree continued, not confirmed gone", note, t.releaseNote), PIDs: t.pids()}
	}
	if left := t.unconfined(t.alive()); len(left) > 0 {
		again, refused := t.stopAndRescan(ctx, left)
		if refused != nil {
			t.resume()
			return "", refused
		}
		note = joinNotes(note, again)
	}
	return note, nil
}

// finish SIGKILLs what is left — a cgroup the tree fills alone as a unit —
// confirms every member gone and every unit empty, looks for what the
// tree may have forked while dying, and says how the tree ended: killed
// only when all of it is confirmed gone.
func (t *tree) finish(note string) Result {
	left := t.alive()
	units, cgNote := t.killUnits(left)
	note = joinNotes(note, cgNote)
	for _, h := range left {
		if !units.covers(h.PID) {
			t.send(h, kill.Kill)
		}
	}
	t.wait(context.Background(), t.opt.KillWait, nil)
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
	escaped, failed := t.escapees()
	if failed {
		return Result{Outcome: policy.Failed, Detail: joinNotes(escaped, note), PIDs: t.pids()}
	}
	note = joinNotes(note, escaped)
	if t.conf != nil && !t.conf.Remove() {
		note = joinNotes(note, "cgroup "+t.conf.Path+" could not be removed")
	}
	if !t.delivered {
		return Result{Outcome: policy.Gone, Detail: joinNotes("every process exited before a signal reached it", note), PIDs: t.pids()}
	}
	return Result{Outcome: policy.Killed, Detail: joinNotes(note, t.pidfdNote()), PIDs: t.pids()}
}

// open opens a verified handle on p. A process that is gone is noted; one
// that is another process now is left alone; a refusal stops the tree.
func (t *tree) open(s *platform.Snapshot, p *platform.Process) (Result, bool) {
	h, err := kill.Open(kill.Target{PID: p.PID, StartTicks: p.StartTicks}, t.opt.Guard)
	t.ids[p.PID] = s.Identity(p)
	switch {
	case err == nil:
		t.handles = append(t.handles, h)
		t.starts[p.PID] = p.StartTicks
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
func (t *tree) send(h *kill.Handle, sig kill.Signal) (Result, bool) {
	err := t.opt.send(h, sig)
	ev := Event{Time: time.Now().UTC(), RootPID: t.root, PID: h.PID, Start: t.ids[h.PID], Signal: kill.SignalName(sig), Via: kill.EndCall(sig), Result: "ok"}
	defer func() { t.emit(ev) }()
	switch {
	case err == nil:
		t.delivered = t.delivered || sig == kill.Term || sig == kill.Kill
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
// none does: a tree cannot escape by forking while it is being killed.
// Every member, new or planned, is admitted again on each rescan with what
// the fresh read says of it — stopped, it can no longer change its user or
// command line. It returns a note when the bound was reached, or a
// refusal when a member may not be touched, or a failure when the run is
// interrupted (the caller continues what was stopped).
func (t *tree) stopAndRescan(ctx context.Context, members []*kill.Handle) (string, *Result) {
	toStop := members
	for round := 0; ; round++ {
		for _, h := range toStop {
			if t.opt.Journal != nil {
				t.opt.Journal.Stopping(h.PID, t.starts[h.PID])
			}
			if r, stop := t.send(h, kill.Stop); stop {
				return "", &r
			}
		}
		before := len(t.handles)
		if ctx.Err() != nil {
			return "", &Result{Outcome: stoppedOutcome(ctx), Detail: stopped(ctx) + " before SIGTERM: the stopped processes were continued", PIDs: t.pids()}
		}
		if round == t.opt.MaxRescans {
			return fmt.Sprintf("new processes still appeared after %d rescans", round), nil
		}
		s, err := platform.ReadSnapshot(t.opt.ProcRoot)
		if err != nil {
			return "", &Result{Outcome: policy.Refused, Detail: "rescan failed, members not re-checked: " + err.Error(), PIDs: t.pids()}
		}
		tr := scan.NewTree(s)
		added := t.newMembers(s, tr)
		// The sessions and groups that hold only the tree and its forks
		// are where its later forks will be: taken at every round, since a
		// tree that keeps forking never gives a round with nothing new.
		if t.groups == nil {
			t.groups = map[int]bool{}
		}
		for id := range t.ownGroups(s, tr) {
			t.groups[id] = true
		}
		s.Close()
		if added < 0 {
			return "", &Result{Outcome: policy.Refused, Detail: t.refusal, PIDs: t.pids()}
		}
		if added == 0 {
			return "", nil
		}
		toStop = t.handles[before:]
	}
}

// newMembers admits every member again, then opens handles on children of
// members that are not members yet, admitting each; -1 when one is
// refused, else how many were added.
func (t *tree) newMembers(s *platform.Snapshot, tr *scan.Tree) int {
	known := map[int]bool{}
	for _, h := range t.handles {
		known[h.PID] = true
		p := s.Get(h.PID)
		if p == nil || p.StartTicks != t.starts[h.PID] || p.Zombie() {
			continue // gone, or dying: nothing of it to signal
		}
		if why := t.admit(s, p); why != "" {
			t.refusal = fmt.Sprintf("pid %d, re-checked once stopped: %s", p.PID, why)
			return -1
		}
	}
	added := 0
	for _, h := range slices.Clone(t.handles) {
		i := s.Index(h.PID)
		if i < 0 {
			continue
		}
		for _, k := range tr.Children(i) {
			c := &s.Procs[k]
			if known[c.PID] || c.Zombie() || t.isApart(c) {
				continue
			}
			if why := t.admit(s, c); why != "" {
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

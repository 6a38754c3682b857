package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
)

// ReapConfig is one `reaper reap`: a run that acts.
type ReapConfig struct {
	Config
	// Started is when the run began (its metrics say how long it took);
	// Deadline ends it: what it stopped is continued.
	Started, Deadline time.Time
	// DryRun sends only signal 0, to check each action would be permitted.
	DryRun bool
	// LockFile is the one-reaper-at-a-time lock ("": paths.Paths.Lock), waited
	// on up to LockWait.
	LockFile string
	LockWait time.Duration
	// LogRepeats records a report-only finding on every run, not only
	// when first seen or changed (audit.Seen).
	LogRepeats bool
	Records    Records
	// OnProgress is told what the reap is doing to each tree (a terminal's
	// progress line); nil: nothing.
	OnProgress func(reap.Progress)
	// BeforeAct runs between planning and the ledger re-read: a seam for
	// tests that change the world in that window.
	BeforeAct func()
	// LockOptional: where the lock file cannot be made (a read-only
	// filesystem, no such dir, no permission), reap without it and tell
	// NoLock — for `reaper run` as a container's init, whose namespace's
	// processes no other reaper there shares. A lock another reaper holds
	// is never passed over.
	LockOptional bool
	NoLock       func(error)
}

// DefaultTimeout bounds a reap under pol when no --timeout says: room for
// its trees' graces (side by side, with their stops and rescans) and
// their confirmation.
func DefaultTimeout(pol *policy.Policy) time.Duration {
	return 3*pol.Defaults.Grace + 30*time.Second
}

// errReapFixture refuses a reap of a fixture's table: its pids are not
// this machine's processes.
var errReapFixture = errors.New("--proc is for scan only: reap acts on the live process table, never on a fixture's facts")

// Reaped is what a reap did — its report (outcomes in), the signals it
// sent, each item's result — with the pass it acted on, open: its plan
// holds each item's outcome, and a watch arms from its table (the owners
// to watch, the next min_age, the dirs announcing owners) and reads its
// live figures there. Its caller leaves its traces (Record) and closes
// it.
type Reaped struct {
	*Pass
	Report  *audit.Report
	Results []reap.Result
	Signals []audit.Record
	// Lock is the lock file the reap held (its default when the config
	// named none): what it remembers sits beside it.
	Lock string
	// Reread says the pass read every user's state again before it acted:
	// its first plan would have signalled, and rested in part on reads
	// kept from an earlier pass (ReapConfig.Cache).
	Reread bool
}

// Reap is one reap, in order: take the lock, collect, plan, re-read the
// ledgers with a fresh table and spare what became owned, make the report
// (every process it names read while it still exists), let go of the
// details of every process the plan does not act on, execute, fill in
// each item's outcome. ctx carries the deadline. The caller records it
// (Reaped.Record) and closes it.
func Reap(ctx context.Context, cfg ReapConfig) (*Reaped, error) {
	if cfg.ProcRoot != "" {
		return nil, errReapFixture
	}
	if cfg.LockFile == "" {
		cfg.LockFile = paths.Current().Lock
	}
	release, err := lock(cfg.LockFile, cfg.LockWait)
	if err != nil && cfg.LockOptional && platform.Unmakeable(err) {
		// A read-only image, a lock dir that is not there: an init's
		// reap goes on without (NoLock says so).
		cfg.NoLock(err)
		release, err = func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	defer release()
	// What a reap that died left is given back before this one reads the
	// table.
	books := openBooks(cfg.LockFile, cfg.DryRun)

	pol := cfg.Policy
	mode := policy.ModeReap
	if cfg.DryRun {
		mode = policy.ModeDryRun
	}
	pass, err := Scan(ctx, cfg.Config, mode)
	if err != nil {
		return nil, err
	}
	// A watch's pass judged some users' state as an earlier pass read it
	// (their trees were no candidates). Evidence under a live owner can
	// still make a finding of it — a server tied to a thread that ended —
	// so a pass that would signal reads everyone's state again first, and
	// plans from that.
	reread := false
	if cfg.Cache != nil && pass.Kept > 0 && plannedAny(pass.Plan) {
		pass.Close()
		cfg.Cache.Refresh()
		if pass, err = Scan(ctx, cfg.Config, mode); err != nil {
			return nil, err
		}
		reread = true
	}
	t, plan := pass.Table, pass.Plan
	if cfg.BeforeAct != nil {
		cfg.BeforeAct()
	}
	if err := spareNewlyOwned(ctx, cfg.Config, plan); err != nil {
		pass.Close()
		return nil, err
	}
	// A tree its live parent keeps starting again as reaper ends it is
	// left alone after a few cycles (respawns).
	books.loops.refuse(plan, t.Snap)
	facts := pass.facts()
	acted := map[*platform.Process]bool{}
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			acted[m.Proc] = true
		}
	}
	t.Snap.DropDetails(func(p *platform.Process) bool { return acted[p] })

	if !cfg.DryRun {
		refuseUnrecorded(plan, cfg.Records)
	}
	acting := time.Now()
	var events []reap.Event
	results := reap.Execute(ctx, plan, t.Snap, reap.Options{
		Journal:    books.journal(plan),
		Grace:      pol.Defaults.Grace,
		DryRun:     cfg.DryRun,
		ProcRoot:   platform.DefaultProcRoot,
		Deadline:   cfg.Deadline,
		Guard:      kill.NewGuard(plan.Gate.Deny(plan)),
		OnSignal:   func(e reap.Event) { events = append(events, e) },
		OnProgress: cfg.OnProgress,
	})
	books.close(plan, results, t.Snap, acting)
	// Each item's outcome and detail, and every pid its action covered
	// (rescans included), into the plan and the report.
	covered := map[int][]int{}
	for i, res := range results {
		plan.Items[i].Outcome, plan.Items[i].Detail = res.Outcome, res.Detail
		covered[plan.Items[i].Finding.Root.PID] = res.PIDs
	}
	signals := signalRecords(events)
	rep := audit.NewReport(facts, pol, t.Snap, &audit.Done{Plan: plan, Covered: covered, Signals: signals, Warnings: books.warnings})
	return &Reaped{Pass: pass, Report: rep, Results: results, Signals: signals, Reread: reread, Lock: cfg.LockFile}, nil
}

// refuseUnrecorded refuses every signal of the plan when its record
// cannot be kept: the audit log the run was given cannot be opened for
// appending. What reaper does must never go unrecorded, so it does
// nothing then — each planned item refused, saying why (exit 3) — rather
// than act and fail to say so afterwards. With no audit log named (root
// without --audit-log) the report and the journal are the record.
func refuseUnrecorded(plan *policy.Plan, recs Records) {
	if recs.AuditLog == "" {
		return
	}
	err := audit.CheckLog(recs.AuditLog)
	if err == nil {
		return
	}
	refused := 0
	for i := range plan.Items {
		if it := &plan.Items[i]; it.Signals() && it.Outcome == policy.Planned {
			it.Outcome, it.Detail = policy.Refused, fmt.Sprintf("not signalled: its record cannot be kept (%v), and reaper never acts unrecorded", err)
			refused++
		}
	}
	if refused > 0 && recs.Log != nil {
		recs.Log.Error("nothing signalled: the audit log cannot be written", "path", recs.AuditLog, "err", err, "refused", refused)
	}
}

// Record leaves the reap's traces, with what a watch adds to the metrics
// (nil: none). A real reap records a report-only finding in the audit log
// and the journal when it is first seen or has changed (audit.Seen),
// remembered beside the lock.
func (r *Reaped) Record(cfg ReapConfig, watch *audit.WatchMetrics) error {
	logged := r.Report
	var seen *audit.Seen
	if r.Report.Mode == string(policy.ModeReap) && !cfg.LogRepeats {
		lock := r.Lock
		if lock == "" {
			lock = cfg.LockFile
		}
		seen = audit.LoadSeen(paths.BesideLock(lock).Seen)
		logged = seen.Filter(r.Report)
	}
	recs := cfg.Records
	recs.Watch = watch
	if err := recs.Record(r.Report, logged, r.Signals, time.Since(cfg.Started)); err != nil {
		return err
	}
	if seen != nil {
		if err := seen.Save(); err != nil && cfg.Records.Log != nil {
			cfg.Records.Log.Warn("the findings already recorded were not remembered: the next run records them again", "err", err)
		}
	}
	return nil
}

// spareNewlyOwned re-reads the ledgers with a fresh table just before
// acting (docs/safety.md) and lets the plan spare what became owned
// (policy.Plan.SpareOwned).
func spareNewlyOwned(ctx context.Context, cfg Config, plan *policy.Plan) error {
	if !plannedAny(plan) {
		return nil
	}
	now, err := Collect(ctx, cfg)
	if err != nil {
		return err
	}
	defer now.Close()
	plan.SpareOwned(now.Result)
	return nil
}

func plannedAny(plan *policy.Plan) bool {
	for _, it := range plan.Items {
		if it.Outcome == policy.Planned {
			return true
		}
	}
	return false
}

// signalRecords are the audit log's records of the signals sent.
func signalRecords(events []reap.Event) []audit.Record {
	recs := make([]audit.Record, len(events))
	for i, e := range events {
		recs[i] = audit.Record{Time: e.Time, Event: "signal", RootPID: e.RootPID, PID: e.PID, Start: e.Start,
			Signal: e.Signal, Via: e.Via, Result: e.Result}
	}
	return recs
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
	"github.com/orphanreaper/reaper/scan"
)

// reapOptions are the flags of `reaper reap`: those of scan, and more.
type reapOptions struct {
	scanOptions
	dryRun      bool
	lockFile    string
	lockTimeout time.Duration
	timeout     time.Duration

	// beforeAct runs between planning and the ledger re-read, for tests
	// that change the world in that window.
	beforeAct func()
}

func (o *reapOptions) AddFlags(f *pflag.FlagSet) {
	o.scanOptions.AddFlags(f)
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and send only signal 0, to check each action would be permitted")
	f.StringVar(&o.lockFile, "lock-file", lockPath(), "the one-reaper-at-a-time lock `FILE`")
	f.DurationVar(&o.lockTimeout, "lock-timeout", 30*time.Second, "how long to wait for another reaper to finish")
	f.DurationVar(&o.timeout, "timeout", 0, "bound on the whole run (default: 3×grace + 30s)")
}

func newReapCommand(g *globalOptions) *cobra.Command {
	var opts reapOptions
	cmd := &cobra.Command{
		Use:   "reap",
		Short: "Apply the policy: terminate or kill the orphaned trees its rules name",
		Long: `reap does what scan does, then carries out the rules' actions. For each
tree to terminate, every process is first proven to be the one scanned (a
pidfd is opened, then the start time re-read), the tree is stopped and
rescanned until no new process appears, then SIGTERM and SIGCONT are sent,
and after the policy's grace period SIGKILL goes to what remains; each
process is confirmed gone. Ledgers are re-read just before acting, and a
run that became owned is spared.

Never signalled, whatever the policy says: pid 1, kernel threads, zombies,
the reaper and its ancestors, live owners and their running runs, processes
a [[protect]] rule names, processes younger than min_age, and other users'
processes unless a rule's user list names them. A scan that could not read
some ledger or OpenClaw state signals nothing.

One reaper runs at a time per host and user (a lock file); a second one
waits up to --lock-timeout, then exits 1.

--dry-run sends only signal 0 and prints the plan: outcome "planned".

Exit status: 0 every planned action done (or nothing to do), 3 an action
failed or a process survived SIGKILL, 77 lacking the privilege for a
planned action, 78 invalid policy or ledger (nothing signalled).`,
		Example: `  reaper reap --dry-run
  reaper reap --policy /etc/reaper/policy.toml --audit-log /var/log/reaper.jsonl
  reaper reap --ledger ~/.openclaw --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReap(cmd.Context(), &opts, g)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

// outcomeError carries a reap's exit status (3 or 77) after the report
// was written.
type outcomeError struct {
	code int
	msg  string
}

func (e *outcomeError) Error() string { return e.msg }

func runReap(ctx context.Context, opts *reapOptions, g *globalOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	started := time.Now()
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	release, err := acquireLock(opts.lockFile, opts.lockTimeout)
	if err != nil {
		return err
	}
	defer release()

	run, err := collect(ctx, pol, opts.procRoot, opts.ledgers)
	if err != nil {
		return err
	}
	defer run.snap.Close()
	mode := policy.ModeReap
	if opts.dryRun {
		mode = policy.ModeDryRun
	}
	plan := pol.Plan(run.result, policy.PlanOptions{Mode: mode, UID: euid(), Doubt: doubtFrom(run.problems)})
	if opts.beforeAct != nil {
		opts.beforeAct()
	}
	if err := spareNewlyOwned(pol, opts, run, plan); err != nil {
		return err
	}
	// The report names each process by its command line and says what it
	// holds: read them while the processes still exist.
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			run.snap.CommandLine(m.Proc)
		}
	}
	found := inspect(run, plan)

	timeout := opts.timeout
	if timeout <= 0 {
		timeout = 3*pol.Defaults.Grace + 30*time.Second
	}
	var events []reap.Event
	results := reap.Execute(ctx, plan, run.snap, reap.Options{
		Grace:    pol.Defaults.Grace,
		DryRun:   opts.dryRun,
		ProcRoot: rootOr(opts.procRoot),
		Deadline: started.Add(timeout),
		Guard:    platform.NewGuard(denyList(pol, run.result, plan)),
		Check:    checkNew(pol, run.result),
		OnSignal: func(e reap.Event) { events = append(events, e) },
	})
	code, failed := 0, 0
	for i, r := range results {
		it := &plan.Items[i]
		it.Outcome, it.Detail = r.Outcome, r.Detail
		switch {
		case r.Outcome == policy.Failed:
			failed++
			code = exitPartial
		case r.Permission && code == 0:
			code = exitPermission
		}
	}
	if err := emitReap(run, pol, plan, found, results, events, &opts.scanOptions, g, time.Since(started)); err != nil {
		return err
	}
	switch code {
	case exitPartial:
		return &outcomeError{exitPartial, fmt.Sprintf("%d planned actions failed", failed)}
	case exitPermission:
		return &outcomeError{exitPermission, "lacking the privilege for a planned action (run as the processes' user, or as root)"}
	}
	return nil
}

func rootOr(procRoot string) string {
	if procRoot == "" {
		return platform.DefaultProcRoot
	}
	return procRoot
}

// spareNewlyOwned re-reads the ledgers with a fresh snapshot just before
// acting (SPEC §9.7): a planned tree holding a process that a live owner's
// ledger now holds as a running run — the same process, same start — is
// spared.
func spareNewlyOwned(pol *policy.Policy, opts *reapOptions, run *scanRun, plan *policy.Plan) error {
	if !plannedAny(plan) {
		return nil
	}
	now, err := collectWith(pol, opts.procRoot, opts.ledgers, true)
	if err != nil {
		return err
	}
	defer now.snap.Close()
	for i := range plan.Items {
		it := &plan.Items[i]
		if it.Outcome != policy.Planned {
			continue
		}
		for _, m := range it.Finding.Members {
			p := now.snap.Get(m.Proc.PID)
			if p == nil || p.StartTicks != m.Proc.StartTicks {
				continue
			}
			if why, owned := now.result.OwnedRun(p.PID); owned {
				it.Outcome, it.Detail = policy.Refused, fmt.Sprintf("spared: since the scan, pid %d became %s", p.PID, why)
				break
			}
		}
	}
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

// denyList is what the seam refuses besides its own rules: every live
// owner the scan saw, every run a live owner's ledger holds, and every
// process of the plan's trees a [[protect]] entry names (the plan refuses
// such trees already; the seam refuses them again).
func denyList(pol *policy.Policy, res *scan.Result, plan *policy.Plan) map[int]string {
	deny := map[int]string{}
	s := res.Tree.Snap
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			if pr := pol.Protected(s, m.Proc); pr != nil {
				deny[m.Proc.PID] = fmt.Sprintf("protected by %q", pr.Name)
			}
		}
	}
	for _, p := range res.LiveOwners() {
		deny[p.PID] = "a live owner"
	}
	for _, lr := range res.Ledger {
		if why, ok := res.OwnedRun(lr.Run.PID); ok {
			deny[lr.Run.PID] = why
		}
	}
	return deny
}

// checkNew refuses a process a rescan found in a tree when the policy
// protects it or it is a live owner.
func checkNew(pol *policy.Policy, res *scan.Result) func(*platform.Snapshot, *platform.Process) string {
	owners := pol.ScanConfig().Owners
	return func(s *platform.Snapshot, p *platform.Process) string {
		if pr := pol.Protected(s, p); pr != nil {
			return fmt.Sprintf("protected by %q", pr.Name)
		}
		cmd := s.CommandLine(p)
		for _, o := range owners {
			if o.Cmdline != nil && o.Cmdline.MatchString(cmd) {
				return "a live owner (" + o.Name + ")"
			}
		}
		return ""
	}
}

// emitReap writes the report, the audit log (decisions and signals) and
// the metrics.
func emitReap(run *scanRun, pol *policy.Policy, plan *policy.Plan, found *inspection, results []reap.Result, events []reap.Event, opts *scanOptions, g *globalOptions, took time.Duration) error {
	rep := audit.NewReport(pol, run.result, plan)
	rep.Errors = append(rep.Errors, run.problems...)
	found.apply(rep)
	covered := map[int][]int{} // root → every pid the action covered, rescans included
	for i, r := range results {
		covered[plan.Items[i].Finding.Root.PID] = r.PIDs
	}
	for i := range rep.Findings {
		if pids := covered[rep.Findings[i].RootPID]; len(pids) > 0 {
			rep.Findings[i].PIDs = pids
		}
	}
	if err := record(rep, signalRecords(events), opts, g, took); err != nil {
		return err
	}
	return writeReport(rep, run, opts, g)
}

func signalRecords(events []reap.Event) []audit.Record {
	recs := make([]audit.Record, len(events))
	for i, e := range events {
		recs[i] = audit.Record{Time: e.Time, Event: "signal", RootPID: e.RootPID, PID: e.PID, Start: e.Start,
			Signal: e.Signal, Via: e.Via, Result: e.Result}
	}
	return recs
}

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform/signals"
	"github.com/orphanreaper/reaper/run"
)

// reapOptions are the flags of `reaper reap`: those of scan, and more.
type reapOptions struct {
	scanOptions
	dryRun      bool
	lockFile    string
	lockTimeout time.Duration
	logRepeats  bool

	// beforeAct runs between planning and the ledger re-read, for tests
	// that change the world in that window.
	beforeAct func()
}

func (o *reapOptions) AddFlags(f *pflag.FlagSet) {
	o.scanOptions.AddFlags(f)
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and send only signal 0, to check each action would be permitted")
	f.StringVar(&o.lockFile, "lock-file", "", "the one-reaper-at-a-time lock `FILE` (default "+paths.SystemLock+" as root, else "+paths.Said("linux").Lock+")")
	f.DurationVar(&o.lockTimeout, "lock-timeout", 30*time.Second, "how long to wait for another reaper to finish")
	f.BoolVar(&o.logRepeats, "log-repeats", false, "record a report-only finding in the audit log and journal on every run, not only when first seen or changed")
}

func newReapCommand(g *globalOptions) *cobra.Command {
	var opts reapOptions
	cmd := &cobra.Command{
		Use:   "reap",
		Short: "Apply the policy: terminate or kill the orphaned trees its rules name",
		Example: `  reaper reap --dry-run
  reaper reap --policy ` + paths.SystemPolicy + ` --audit-log ` + paths.SystemAuditLog + `
  reaper reap --ledger ~/.openclaw --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			userAuditLogDefault(cmd, &opts.auditLog)
			return runReap(cmd.Context(), &opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("reap") })
	opts.AddFlags(cmd.Flags())
	cmd.Flags().Lookup("audit-log").Usage += auditLogDefaultNote
	cmd.Flags().MarkHidden("proc") // scan's: reap refuses a fixture table
	return cmd
}

func runReap(ctx context.Context, opts *reapOptions, g *globalOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if opts.procRoot != "" {
		return usagef("--proc is for scan only: reap acts on the live process table, never on a fixture's facts")
	}
	started := time.Now()
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	timeout := opts.timeout
	if timeout <= 0 {
		timeout = run.DefaultTimeout(pol)
	}
	ctx, cancel := context.WithDeadline(ctx, started.Add(timeout))
	defer cancel()
	cfg := run.ReapConfig{Config: opts.config(pol, timeout, true), Started: started, Deadline: started.Add(timeout),
		DryRun: opts.dryRun, LockFile: opts.lockFile, LockWait: opts.lockTimeout, LogRepeats: opts.logRepeats,
		Records: opts.records(g), BeforeAct: opts.beforeAct}
	if f, ok := g.stderr.(*os.File); ok && !g.quiet && !opts.dryRun && audit.IsTerminal(f) {
		cfg.OnProgress = (&audit.Progress{W: f}).Show
	}
	done, err := run.Reap(ctx, cfg)
	if err != nil {
		return err
	}
	defer done.Close()
	if err := done.Record(cfg, nil); err != nil {
		return err
	}
	if err := writeReport(done.Report, &opts.scanOptions, g); err != nil {
		return err
	}
	if s, ok := context.Cause(ctx).(signalled); ok {
		// An interrupt: the trees it stopped are interrupted, not failed,
		// and the status is a shell's for the signal, as reaper run's.
		fmt.Fprintf(g.stderr, "reaper reap: interrupted by %s: what was stopped is continued; the next run reaps the rest\n", signals.Name(s.sig))
		return exitStatus(signals.ExitStatus(s.sig))
	}
	return done.Status()
}

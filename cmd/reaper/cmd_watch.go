package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/notify"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform/signals"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/watch"
	"github.com/orphanreaper/reaper/scrape"
)

// watchOptions are the flags of `reaper watch`: reap's, and the backstop.
type watchOptions struct {
	reapOptions
	backstop    time.Duration
	notify      bool
	notifyAbove string
	under       int
	listen      string
	tokenFile   string
}

func newWatchCommand(g *globalOptions) *cobra.Command {
	var opts watchOptions
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Reap in the second an owner dies: passes on its exit, at min_age, and every --backstop",
		Example: `  reaper watch --dry-run
  reaper watch --policy ` + paths.SystemPolicy + ` --audit-log ` + paths.SystemAuditLog + `
  kill -HUP "$(pidof reaper)"    # read the policy again`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			userAuditLogDefault(cmd, &opts.auditLog)
			return runWatch(cmd.Context(), &opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("watch") })
	opts.AddFlags(cmd.Flags())
	cmd.Flags().Lookup("audit-log").Usage += auditLogDefaultNote
	cmd.Flags().DurationVar(&opts.backstop, "backstop", time.Minute, "the longest time between two passes, whatever the hints say")
	cmd.Flags().IntVar(&opts.under, "under", 0, "watch only what the init at `PID` adopted and its descendants (the watch reaper run runs inside)")
	cmd.Flags().MarkHidden("under")
	cmd.Flags().BoolVar(&opts.notify, "notify", false, "tell the desktop what was ended, and large trees only reported")
	cmd.Flags().StringVar(&opts.notifyAbove, "notify-above", "512MiB", "with --notify: the `SIZE` from which a report-only tree is told of (0: never)")
	cmd.Flags().StringVar(&opts.listen, "metrics-listen", "", "serve /metrics (Prometheus) and /healthz at `ADDR` (host:port; a port alone is loopback's; 127.0.0.1:0 picks a port, said at the start): for a pod, where no textfile collector runs")
	cmd.Flags().StringVar(&opts.tokenFile, "metrics-token-file", "", "with --metrics-listen: /metrics answers only a scrape that sends the bearer token in `FILE` (Prometheus' authorization.credentials_file)")
	cmd.Flags().MarkHidden("proc")
	cmd.Flags().MarkHidden("output") // a pass prints its --quiet lines
	cmd.Flags().MarkHidden("all")
	return cmd
}

func runWatch(ctx context.Context, opts *watchOptions, g *globalOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if opts.procRoot != "" {
		return usagef("--proc is for scan only: watch acts on the live process table")
	}
	if opts.backstop < time.Second {
		return usagef("--backstop %s: want a second or more", opts.backstop)
	}
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	timeout := opts.timeout
	if timeout <= 0 {
		timeout = run.DefaultTimeout(pol)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, signals.Hangup)
	defer signal.Stop(hup)
	above, err := policy.ParseSize(opts.notifyAbove)
	if err != nil {
		return usagef("--notify-above %q: %v", opts.notifyAbove, err)
	}
	cfg := watch.WatchConfig{
		ReapConfig: run.ReapConfig{Config: opts.config(pol, timeout, false), DryRun: opts.dryRun, LockFile: opts.lockFile,
			LockWait: opts.lockTimeout, LogRepeats: opts.logRepeats, Records: opts.records(g)},
		Backstop: opts.backstop,
		Reload:   func() (*policy.Policy, error) { return resolvePolicy(opts.policyFile) },
		Log:      g.log,
		OnPass: func(r *run.Reaped, trigger string) {
			if err := r.Report.WriteQuietAs(g.stdout, "watch "+time.Now().Format("15:04:05")); err != nil && g.log != nil {
				g.log.Warn("a pass's lines were not written", "err", err)
			}
			if g.log != nil {
				g.log.Debug("pass", "trigger", trigger, "findings", len(r.Plan.Items))
			}
		},
	}
	if opts.under > 0 { // reaper run's watch: no lock is said once, not on every pass
		var once sync.Once
		cfg.Under, cfg.Reaped = opts.under, g.reaped
		cfg.NoLock = func(err error) {
			once.Do(func() { fmt.Fprintf(g.stderr, "reaper run: watch without a lock (%v)\n", err) })
		}
	}
	if opts.notify {
		cfg.Desktop = notify.New(os.Getenv, above, g.log)
	}
	if opts.listen != "" {
		// A port alone (":9469", "9469") is loopback's: an endpoint other
		// hosts reach is asked for by its address.
		srv, err := scrape.ListenWith(opts.listen, scrape.Options{Limit: 2*opts.backstop + timeout, TokenFile: opts.tokenFile})
		if err != nil {
			return usagef("--metrics-listen %s: %v", opts.listen, err)
		}
		go func() {
			if err := srv.Serve(ctx); err != nil {
				fmt.Fprintf(g.stderr, "reaper watch: the metrics endpoint stopped: %v\n", err)
			}
		}()
		cfg.Publish = srv.Publish
		// Said even with --quiet: a port 0 is known only from here, and
		// who can read the series is the operator's to know.
		fmt.Fprintf(g.stderr, "reaper watch: metrics at http://%s/metrics, health at http://%s/healthz (%s)\n", srv.Addr(), srv.Addr(), srv.ReachedBy())
	} else if opts.tokenFile != "" {
		return usagef("--metrics-token-file goes with --metrics-listen")
	}
	if !g.quiet { // a foreground watch says it started, and how it works
		fmt.Fprintf(g.stdout, "reaper watch %s: policy %s; a pass as an owner exits, at a tree's min_age, and every %s%s\n", versionString(), pol.Source, opts.backstop, map[bool]string{true: " (dry run: nothing is signalled)"}[opts.dryRun])
	}
	if err := watch.Watch(ctx, cfg, hup); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}

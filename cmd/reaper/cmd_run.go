package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run"
)

// runOptions are the flags of `reaper run`.
type runOptions struct {
	policyFile string
	auditLog   string
	lockFile   string
	record     bool
	group      bool
	watch      bool // --watch given: watch; else as PID 1 alone
	listen     string
}

func newRunCommand(g *globalOptions) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARG...]",
		Short: "Run a client, or a container's command as its init, and reap what it leaves behind",
		Long:  docs.Help("run"),
		Example: `  reaper run -- claude
  reaper run --audit-log ~/.local/state/reaper/audit.jsonl -- codex`,
		Args: someArgs("CMD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usagef("want: reaper run [flags] -- CMD [ARG...]")
			}
			if !cmd.Flags().Changed("watch") {
				opts.watch = os.Getpid() == 1 // a container's init watches unless told not to
			}
			if opts.listen != "" && !opts.watch {
				return usagef("--metrics-listen serves the watch's metrics: it needs the watch (--watch, or run as a PID namespace's init)")
			}
			return runRun(args, &opts, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` for its grace, [[protect]] and [[owner]] entries (default as for reap)")
	f.StringVar(&opts.auditLog, "audit-log", "", "append one JSON line per decision and signal to `FILE`")
	f.StringVar(&opts.lockFile, "lock-file", "", "the one-reaper-at-a-time lock `FILE` (default as for reap)")
	f.BoolVar(&opts.watch, "watch", false, "while CMD lives, run the watch inside: reap, by the policy, what CMD's tree leaves as it appears (default: on as a PID namespace's init, off elsewhere; --watch=false turns it off)")
	f.StringVar(&opts.listen, "metrics-listen", "", "the watch inside serves /metrics and /healthz at `ADDR` (host:port), as reaper watch does")
	f.BoolVarP(&opts.group, "group", "g", false, "put CMD in a process group of its own and pass signals to the whole group (tini -g)")
	f.BoolVar(&opts.record, "record", false, "record CMD's descendants while it runs and reap those that outlive it, as on macOS, instead of adopting them")
	f.MarkHidden("record") // how macOS runs; on Linux, for its tests
	return cmd
}

// exitStatus is CMD's exit status, passed on as run's own.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runRun runs CMD and reaps what it left (run.Wrap).
func runRun(argv []string, opts *runOptions, g *globalOptions) error {
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	w := &run.Wrap{Policy: pol, Clients: clients, AuditLog: opts.auditLog, LockFile: opts.lockFile, Record: opts.record,
		Group: opts.group, Watch: opts.watch, PolicyArg: opts.policyFile, MetricsListen: opts.listen, Stderr: g.stderr, Log: g.log}
	code, err := w.Run(argv)
	var se *run.StartError
	if errors.As(err, &se) {
		// As env, timeout and sudo: 127 not found, 126 not executable.
		code := 126
		if se.NotFound {
			code = 127
		}
		fmt.Fprintf(g.stderr, "reaper run: %v\n", err)
		return exitStatus(code)
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

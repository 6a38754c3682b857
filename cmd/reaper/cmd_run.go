package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run/watch"
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
	tokenFile  string
}

func newRunCommand(g *globalOptions) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARG...]",
		Short: "Run a client, or a container's command as its init, and reap what it leaves behind",
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
	g.help.Set(cmd, func() string { return docs.Help("run") })
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` for its grace, [[protect]] and [[owner]] entries (default as for reap)")
	f.StringVar(&opts.auditLog, "audit-log", "", "append one JSON line per decision and signal to `FILE`")
	f.StringVar(&opts.lockFile, "lock-file", "", "the one-reaper-at-a-time lock `FILE` (default as for reap)")
	f.BoolVar(&opts.watch, "watch", false, "while CMD lives, run the watch inside: reap, by the policy, what CMD's tree leaves as it appears (default: on as a PID namespace's init, off elsewhere; --watch=false turns it off)")
	f.StringVar(&opts.listen, "metrics-listen", "", "the watch inside serves /metrics and /healthz at `ADDR` (host:port; a port alone is loopback's), as reaper watch does")
	f.StringVar(&opts.tokenFile, "metrics-token-file", "", "with --metrics-listen: /metrics wants the bearer token in `FILE`, as for reaper watch")
	f.BoolVarP(&opts.group, "group", "g", false, "put CMD in a process group of its own and pass signals to the whole group (tini -g)")
	f.BoolVar(&opts.record, "record", false, "record CMD's descendants while it runs and reap those that outlive it, as on macOS, instead of adopting them")
	f.MarkHidden("record") // how macOS runs; on Linux, for its tests
	return cmd
}

// exitStatus is CMD's exit status, passed on as run's own.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runRun runs CMD and reaps what it left (watch.Wrap).
func runRun(argv []string, opts *runOptions, g *globalOptions) error {
	if os.Getpid() == 1 && os.Getenv("GOMAXPROCS") == "" {
		// A namespace's init, one per sandbox: its passes are over its
		// namespace's handful of processes, which one thread reads as
		// fast, and each thread the runtime runs on costs its stacks and
		// its caches of the heap (measured: 0.3 MiB of 4).
		runtime.GOMAXPROCS(1)
	}
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	w := &watch.Wrap{Policy: pol, Clients: clients, AuditLog: opts.auditLog, LockFile: opts.lockFile, Record: opts.record,
		Group: opts.group, Stderr: g.stderr, Log: g.log}
	if opts.watch {
		w.Inside = opts.insideWatch(g)
	}
	code, err := w.Run(argv)
	var se *watch.StartError
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

// insideWatch is the watch run's process runs beside CMD: `reaper watch
// --under` this process, quiet, its lines on run's stderr, with run's
// policy, lock, audit log and --metrics-listen — the same command, in
// this process rather than a child of its own.
func (o *runOptions) insideWatch(g *globalOptions) func(ctx context.Context, reaped <-chan struct{}) error {
	args := []string{"watch", "--under", strconv.Itoa(os.Getpid()), "--quiet", "--journal", "off"}
	for _, f := range []struct{ flag, v string }{{"--policy", o.policyFile}, {"--lock-file", o.lockFile}, {"--audit-log", o.auditLog}, {"--metrics-listen", o.listen}, {"--metrics-token-file", o.tokenFile}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	return func(ctx context.Context, reaped <-chan struct{}) error {
		ig := &globalOptions{stdin: eofReader{}, stdout: g.stderr, stderr: g.stderr, reaped: reaped}
		root := newBareRoot(ig)
		root.AddCommand(newWatchCommand(ig))
		root.SetArgs(args)
		return root.ExecuteContext(ctx)
	}
}

// eofReader is an empty stdin.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

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
}

func newRunCommand(g *globalOptions) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARG...]",
		Short: "Run a client, or a container's command as its init, and reap what it leaves behind",
		Long: `run starts CMD as its child, as a child subreaper (PR_SET_CHILD_SUBREAPER):
whatever CMD's tree leaves when CMD exits — a server it started and lost, a
job it put in the background, a double-forked or setsid'd process — is
reparented to run instead of init. CMD runs as if started directly: same
terminal and process group (job control, Ctrl-C and window size reach it
from the terminal), SIGTERM and SIGHUP sent to run are passed on, and run
exits with CMD's status (128+N when a signal N ended it).

When CMD exits, run reaps what it adopted as 'reaper reap' reaps a tree:
SIGTERM, the policy's grace, SIGKILL, each process proved and confirmed
gone — unless evidence says a live owner still uses it (a shared daemon
whose record another live session verifies, a run a live owner's ledger
holds, a process whose [[owner]] pid marker or unit names an owner that
lives) or a [[protect]] entry names it. Its lines go to stderr, never to
CMD's stdout.

  alias claude='reaper run -- claude'

A SIGHUP, SIGQUIT, SIGINT or SIGTERM that reaches run after CMD exited
ends the reap as an interrupt ends 'reaper reap' — what it stopped is
continued, a tree it confined given back — and run exits 128+N. If run
itself is killed, what CMD leaves goes to init as before, and the next
reap, watch pass or run continues what it had stopped (its record beside
the lock): 'reaper watch' or the timer is the backstop.

As an adopter (Linux), run is a correct init: every child it adopts is
reaped the moment it exits (no zombie piles up under it, as under a
subreaper that never waits), the signals a container runtime or a
terminal sends — TERM, INT, HUP, QUIT, USR1, USR2, WINCH — are passed to
CMD (to CMD's process group with -g, as tini -g does; INT, QUIT and WINCH
from run's own terminal reach CMD from the terminal), and CMD's status
is run's. As a PID namespace's init (a container's PID 1), once the reap
is done it ends what is left in the namespace — SIGTERM, the policy's
grace, SIGKILL — and exits, so the container stops promptly; with no
writable place for the lock (a read-only image) it reaps without one and
says so. No policy file, config or passwd entry is needed:

  ENTRYPOINT ["reaper", "run", "--", "node", "server.js"]

While CMD lives, --watch (on by default as a namespace's init) runs the
watch inside, scoped to what run adopted and its descendants: the same
passes as 'reaper watch' by the policy (--policy FILE, or --policy - for
the policy's text in $REAPER_POLICY, for an image that cannot mount a
file), so a live gateway's ended sessions' trees and a dead client's
servers are reaped as they appear, not at the container's end.

On macOS, which has no subreapers, run records CMD's descendants while CMD
runs (the process table every second, each process by its pid and start
time) and, when CMD exits, reaps those that outlived it and were
reparented to launchd — the same proved, graced kill. What that cannot
cover: a process that CMD's tree starts and detaches within a second,
between two looks (a daemon double-forked and the middle process gone),
and one started in CMD's last second; 'reaper watch' or the timer is the
backstop for those.`,
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
			return runRun(args, &opts, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` for its grace, [[protect]] and [[owner]] entries (default as for reap)")
	f.StringVar(&opts.auditLog, "audit-log", "", "append one JSON line per decision and signal to `FILE`")
	f.StringVar(&opts.lockFile, "lock-file", "", "the one-reaper-at-a-time lock `FILE` (default as for reap)")
	f.BoolVar(&opts.watch, "watch", false, "while CMD lives, run the watch inside: reap, by the policy, what CMD's tree leaves as it appears (default: on as a PID namespace's init, off elsewhere; --watch=false turns it off)")
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
		Group: opts.group, Watch: opts.watch, PolicyArg: opts.policyFile, Stderr: g.stderr, Log: g.log}
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

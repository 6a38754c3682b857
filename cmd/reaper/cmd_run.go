package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// runOptions are the flags of `reaper run`.
type runOptions struct {
	policyFile string
	auditLog   string
	lockFile   string
	record     bool
}

func newRunCommand(g *globalOptions) *cobra.Command {
	var opts runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARG...]",
		Short: "Run a client, and when it exits, reap what it left behind",
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
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usagef("want: reaper run [flags] -- CMD [ARG...]")
			}
			return runRun(cmd.Context(), args, &opts, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` for its grace, [[protect]] and [[owner]] entries (default as for reap)")
	f.StringVar(&opts.auditLog, "audit-log", "", "append one JSON line per decision and signal to `FILE`")
	f.StringVar(&opts.lockFile, "lock-file", "", "the one-reaper-at-a-time lock `FILE` (default as for reap)")
	f.BoolVar(&opts.record, "record", false, "record CMD's descendants while it runs and reap those that outlive it, as on macOS, instead of adopting them")
	f.MarkHidden("record") // how macOS runs; on Linux, for its tests
	return cmd
}

// exitStatus is CMD's exit status, passed on as run's own.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runRun runs CMD and reaps what it left. The command's context is not
// the reap's: the terminal's Ctrl-C, which reaches run as well as CMD
// while CMD runs, cancels it, and is CMD's; the reap is interrupted only
// by a signal that comes after CMD exited (interruptible).
func runRun(_ context.Context, argv []string, opts *runOptions, g *globalOptions) error {
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	var subreaper error
	if opts.record {
		subreaper = errors.New("--record: descendants are recorded instead")
	} else {
		subreaper = host.BecomeSubreaper()
	}
	if subreaper != nil && g.log != nil {
		g.log.Debug("what the command leaves is not adopted: its descendants are recorded every second instead", "why", subreaper)
	}
	var rec *descendants
	started := func(pid int) {
		if subreaper != nil {
			rec = recordDescendants(pid, time.Second)
		}
	}
	// Caught from before CMD starts, so that none slips through between
	// CMD's exit and the reap: what reaches run while CMD lives is CMD's
	// (relayed, or sent to its group by the terminal), and what reaches it
	// after ends the reap as an interrupt ends 'reaper reap'.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	code, err := host.RunCommand(argv, started)
	var nf *host.NotStartedError
	if errors.As(err, &nf) {
		return noInputError{err}
	}
	if err != nil {
		return err
	}
	me := os.Getpid()
	adopted := func(p *platform.Process) bool { return p.PPID == me }
	if rec != nil {
		seen := rec.stop()
		adopted = func(p *platform.Process) bool { start, ok := seen[p.PID]; return ok && start == p.StartTicks }
	}
	ctx, interrupted := interruptible(sigs)
	err = reapAdopted(ctx, pol, opts, g, adopted)
	if s := interrupted(); s != 0 {
		// Ended like an interrupted reap: what it had stopped continued,
		// a confinement released (reap.Execute); the status says so.
		fmt.Fprintf(g.stderr, "reaper run: interrupted by %s while reaping what the command left: what was stopped is continued; 'reaper watch' or the timer reaps the rest\n", kill.SignalName(s))
		return exitStatus(128 + int(s))
	}
	if err != nil && g.log != nil {
		g.log.Error("what the command left was not reaped", "err", err)
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

// interruptible drops the signals sigs received while the command ran
// (they were the command's) and returns a context cancelled by the next
// one, with the signal that cancelled it (0: none yet).
func interruptible(sigs chan os.Signal) (context.Context, func() syscall.Signal) {
	for drained := false; !drained; {
		select {
		case <-sigs:
		default:
			drained = true
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Int32
	go func() {
		s := <-sigs
		if n, ok := s.(syscall.Signal); ok {
			got.Store(int32(n))
		}
		cancel()
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }
}

// descendants records the processes that descend from one pid, each by
// its pid and start, by a look at the process table every interval until
// stopped: what reaper run reaps where it cannot adopt them (macOS).
type descendants struct {
	root int
	mu   sync.Mutex
	seen map[int]uint64 // pid → StartTicks
	quit chan struct{}
	done chan struct{}
}

// maxRecorded bounds what one run records: a command's tree of more is
// recorded up to it (the watch or the timer covers the rest).
const maxRecorded = 65536

func recordDescendants(root int, every time.Duration) *descendants {
	d := &descendants{root: root, seen: map[int]uint64{}, quit: make(chan struct{}), done: make(chan struct{})}
	d.look()
	go func() {
		defer close(d.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.quit:
				return
			case <-t.C:
				d.look()
			}
		}
	}()
	return d
}

// look reads the table and records every descendant of the root, by the
// scan's tree (whose walk ends even where a racy read closed a loop).
func (d *descendants) look() {
	snap, err := readSnapshot(platform.DefaultProcRoot)
	if err != nil {
		return
	}
	defer snap.Close()
	root := snap.Index(d.root)
	if root < 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	scan.NewTree(snap).Walk(root, func(i, depth int) {
		if p := &snap.Procs[i]; depth > 0 && !p.KernelThread() && len(d.seen) < maxRecorded {
			d.seen[p.PID] = p.StartTicks
		}
	})
}

// stop ends the recording and returns what it recorded.
func (d *descendants) stop() map[int]uint64 {
	close(d.quit)
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen
}

// reapAdopted reaps the trees this process adopted — children that are
// not its own — as a reap does, with one rule: terminate, at any age.
// What a live owner's evidence owns and what [[protect]] names are spared
// by the same gate as every reap's; a tree whose [[owner]] marker or unit
// names an owner that lives is that owner's, not the command's, and is
// left too.
func reapAdopted(parent context.Context, base *policy.Policy, opts *runOptions, g *globalOptions, adopted func(*platform.Process) bool) error {
	pol := *base
	pol.Defaults.MinAge = 0
	self, err := regexp.Compile("^" + regexp.QuoteMeta(strings.Join(os.Args, " ")) + "$")
	if err != nil {
		return err
	}
	pol.Subreapers = append(append([]policy.Subreaper{}, base.Subreapers...), policy.Subreaper{Subreaper: scan.Subreaper{Cmdline: self}})
	pol.Rules = []policy.Rule{{Name: "run-leftover", Action: policy.Terminate,
		When: []scan.Reason{scan.Reparented, scan.OwnerDead, scan.RunDone, scan.SessionEnded, scan.Untracked}}}
	timeout := run.DefaultTimeout(&pol)
	started := time.Now()
	ctx, cancel := context.WithDeadline(parent, started.Add(timeout))
	defer cancel()
	cfg := run.ReapConfig{Config: run.Config{Policy: &pol, Clients: clientsOf(&pol), Discover: true, Timeout: timeout, ReadTable: readSnapshot},
		Started: started, Deadline: started.Add(timeout), LockFile: opts.lockFile, LockWait: 30 * time.Second, LogRepeats: true,
		Records: run.Records{AuditLog: opts.auditLog, Journal: "off", Log: g.log},
		Only: func(f *scan.Finding) bool {
			if !adopted(f.Root) {
				return false // not the command's: the host's, left to reap and watch
			}
			if ownerLives(f) {
				fmt.Fprintf(g.stderr, "reaper run: left %d (%s): its %s, pid %d, is alive and may still use it\n",
					f.Root.PID, audit.Printable(f.Root.Comm), f.Owner, f.OwnerPID)
				return false
			}
			return true
		}}
	r, err := run.Reap(ctx, cfg)
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := r.Report.WriteQuiet(&b); err != nil {
		return err
	}
	fmt.Fprint(g.stderr, strings.ReplaceAll(b.String(), "reaper reap:", "reaper run:"))
	for _, f := range r.Report.Findings {
		if f.Outcome == string(policy.Protected) {
			fmt.Fprintf(g.stderr, "reaper run: left %d: %s\n", f.RootPID, audit.Printable(f.Detail))
		}
	}
	if partial, permission := r.Failures(); partial+permission > 0 {
		return fmt.Errorf("%s of what the command left not reaped (see the lines above)", audit.Plural(partial+permission, "tree"))
	}
	return nil
}

// ownerLives reports whether f's root carries an [[owner]]'s pid marker
// or sits in its unit, and that owner lives: the scan ties the owner and
// adds owner-dead when it is gone.
func ownerLives(f *scan.Finding) bool {
	return f.Owner != "" && !slices.Contains(f.Reasons, scan.OwnerDead)
}

package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/platform/signals"
	"github.com/orphanreaper/reaper/policy"
)

// Wrap is one `reaper run -- CMD`: CMD run as a child subreaper's child,
// and what it left reaped when it exits.
type Wrap struct {
	Policy  *policy.Policy
	Clients client.Set
	// AuditLog and LockFile are the reap's, as reap takes them.
	AuditLog, LockFile string
	// Record: record CMD's descendants every second instead of adopting
	// them (how macOS runs; on Linux, for tests).
	Record bool
	// Group relays signals to CMD's process group rather than to CMD
	// (tini's -g), CMD in a group of its own.
	Group bool
	// Inside, when set, is the watch run inside this process while CMD
	// lives (reaper run's --watch): given a context that ends when CMD
	// has exited, and told of each adopted child this process reaped (its
	// children, if it had any, are this process's now). Run waits for it
	// to return before it reaps what CMD left.
	Inside func(ctx context.Context, reaped <-chan struct{}) error
	// Grace bounds, for a PID namespace's init, how long what is left
	// after the reap has between SIGTERM and SIGKILL (0: the policy's
	// grace).
	Grace time.Duration
	// Stderr takes run's own lines, never CMD's stdout; Log its debug and
	// error records (nil: none).
	Stderr io.Writer
	Log    *slog.Logger
}

// StartError is a CMD that could not be started: not found (NotFound),
// or found and not executable.
type StartError struct {
	Err      error
	NotFound bool
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Run runs argv and reaps what it left; the status is CMD's (128+N when a
// signal N ended it), or 128+N of a signal that interrupted the reap. The
// command's context is not the reap's: the terminal's Ctrl-C, which
// reaches run as well as CMD while CMD runs, is CMD's; the reap is
// interrupted only by a signal that comes after CMD exited
// (interruptible).
func (w *Wrap) Run(argv []string) (status int, err error) {
	var subreaper error
	if w.Record {
		subreaper = errors.New("--record: descendants are recorded instead")
	} else {
		subreaper = host.BecomeSubreaper()
	}
	if subreaper != nil && w.Log != nil {
		w.Log.Debug("what the command leaves is not adopted: its descendants are recorded every second instead", "why", subreaper)
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
	signal.Notify(sigs, signals.Wrapping...)
	defer signal.Stop(sigs)
	var code int
	adoptedZombies := 0
	if subreaper == nil || os.Getpid() == 1 {
		// An adopter reaps what it adopts as it exits, as an init does,
		// and runs the watch inside beside it, in this process.
		reaped := make(chan struct{}, 1)
		inside := w.inside(started)
		code, err = host.RunInit(argv, host.Init{Group: w.Group, Reaped: func(int) {
			adoptedZombies++
			select {
			case reaped <- struct{}{}:
			default:
			}
		}}, func(pid int) { inside.start(pid, reaped) })
		inside.stop()
	} else {
		code, err = host.RunCommand(argv, started)
	}
	var nf *host.NotStartedError
	if errors.As(err, &nf) {
		return 0, &StartError{err, nf.NotFound}
	}
	if err != nil {
		return 0, err
	}
	me := os.Getpid()
	adopted := func(p *platform.Process) bool { return p.PPID == me }
	if rec != nil {
		seen := rec.stop()
		adopted = func(p *platform.Process) bool { start, ok := seen[p.PID]; return ok && start == p.StartTicks }
	}
	ctx, interrupted := interruptible(sigs)
	err = w.reapAdopted(ctx, adopted)
	if s := interrupted(); s != nil {
		// Ended like an interrupted reap: what it had stopped continued,
		// a confinement released (reap.Execute); the status says so.
		fmt.Fprintf(w.Stderr, "reaper run: interrupted by %s while reaping what the command left: what was stopped is continued; 'reaper watch' or the timer reaps the rest\n", signals.Name(s))
		return signals.ExitStatus(s), nil
	}
	switch {
	case err != nil && os.Getpid() == 1:
		// Not an error yet: what the reap left, the namespace's end below
		// ends, and says so.
	case err != nil && w.Log != nil:
		w.Log.Error("what the command left was not reaped", "err", err)
	}
	if w.Log != nil && adoptedZombies > 0 {
		w.Log.Debug("adopted children reaped as they exited", "count", adoptedZombies)
	}
	if os.Getpid() == 1 {
		w.endNamespace()
	}
	host.DrainZombies()
	return code, nil
}

// insideWatch is the watch a Wrap runs inside its process while CMD
// lives.
type insideWatch struct {
	w       *Wrap
	started func(int)
	cancel  context.CancelFunc
	done    chan struct{}
}

func (w *Wrap) inside(started func(int)) *insideWatch {
	return &insideWatch{w: w, started: started}
}

// start is RunInit's started: CMD runs at pid; the watch starts beside
// it.
func (in *insideWatch) start(pid int, reaped <-chan struct{}) {
	if in.started != nil {
		in.started(pid)
	}
	if in.w.Inside == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel, in.done = cancel, make(chan struct{})
	go func() {
		defer close(in.done)
		if err := in.w.Inside(ctx, reaped); err != nil {
			fmt.Fprintf(in.w.Stderr, "reaper run: the watch inside stopped: %v\n", err)
		}
	}()
}

// stop ends the watch once CMD has exited, and waits for it: a pass in
// flight ends what it stopped, as a reap interrupted does.
func (in *insideWatch) stop() {
	if in.cancel == nil {
		return
	}
	in.cancel()
	<-in.done
}

// endNamespace ends, as a PID namespace's init, what the reap left in the
// namespace — [[protect]]ed trees, what a live owner's evidence claimed,
// what no rule took — before this init exits and the kernel SIGKILLs it
// all: SIGTERM, up to the grace, SIGKILL (host.EndNamespace).
func (w *Wrap) endNamespace() {
	grace := w.Grace
	if grace <= 0 {
		grace = w.Policy.Defaults.Grace
	}
	n, killed, err := host.EndNamespace(grace)
	switch {
	case err != nil:
		fmt.Fprintf(w.Stderr, "reaper run: what was left in the namespace was not ended: %v\n", err)
	case n > 0 && killed:
		fmt.Fprintf(w.Stderr, "reaper run: ended %s left in the namespace, some by SIGKILL after %s\n", audit.Plural(n, "process"), grace)
	case n > 0:
		fmt.Fprintf(w.Stderr, "reaper run: ended %s left in the namespace (SIGTERM)\n", audit.Plural(n, "process"))
	}
}

// interruptible drops the signals sigs received while the command ran
// (they were the command's) and returns a context cancelled by the next
// one, with the signal that cancelled it (nil: none yet).
func interruptible(sigs chan os.Signal) (context.Context, func() os.Signal) {
	for drained := false; !drained; {
		select {
		case <-sigs:
		default:
			drained = true
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Value
	go func() {
		got.Store(<-sigs)
		cancel()
	}()
	return ctx, func() os.Signal { s, _ := got.Load().(os.Signal); return s }
}

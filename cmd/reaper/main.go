// Command reaper finds and removes the process trees AI-agent gateways leave
// behind. See `reaper --help`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/orphanreaper/reaper/platform/signals"
	"github.com/orphanreaper/reaper/run"
)

func main() {
	runReaderIfAsked()
	ctx, stop := signalContext()
	cmd, err := newRootCommand(newGlobalOptions()).ExecuteContextC(ctx)
	stop()
	path := ""
	if cmd != nil {
		path = cmd.CommandPath()
	}
	os.Exit(exitCode(err, os.Stderr, path))
}

// signalContext is a context that SIGINT or SIGTERM cancel, with the
// signal as its cause (signalled): a command that stops for it — a
// prompt no one answered — exits 128+N, as a shell reports a process the
// signal ended. Signals after the first still only cancel.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, signals.Ending...)
	go func() {
		if s, ok := <-sigs; ok {
			cancel(signalled{s})
		}
	}()
	return ctx, func() { signal.Stop(sigs); close(sigs); cancel(nil) }
}

// signalled is the cause of a context a signal canceled.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string        { return signals.Name(s.sig) + " received" }
func (s signalled) Is(target error) bool { return target == context.Canceled }

// runReaderIfAsked turns this process into a reader child (gather) when
// its parent, a root reaper, started it as one, and never returns then. It
// runs before anything else: the child sets its limits first thing.
func runReaderIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == run.ChildCommand {
		os.Exit(run.ChildMain(os.Args[2:], os.Stdout, os.Stderr, clients))
	}
}

// Command reaper finds and removes the process trees AI-agent gateways leave
// behind. See `reaper --help`.
package main

import (
	"context"
	"github.com/orphanreaper/reaper/run"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	runReaderIfAsked()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd, err := newRootCommand(newGlobalOptions()).ExecuteContextC(ctx)
	stop()
	path := ""
	if cmd != nil {
		path = cmd.CommandPath()
	}
	os.Exit(exitCode(err, os.Stderr, path))
}

// runReaderIfAsked turns this process into a reader child (gather) when
// its parent, a root reaper, started it as one, and never returns then. It
// runs before anything else: the child sets its limits first thing.
func runReaderIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == run.ChildCommand {
		os.Exit(run.ChildMain(os.Args[2:], os.Stdout, os.Stderr, clients))
	}
}

// Command reaper finds and removes the process trees AI-agent gateways leave
// behind. See `reaper --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd, err := newRootCommand(newGlobalOptions()).ExecuteContextC(ctx)
	stop()
	path := ""
	if cmd != nil {
		path = cmd.CommandPath()
	}
	os.Exit(exitCode(err, os.Stderr, path))
}

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
	err := newRootCommand(newGlobalOptions()).ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

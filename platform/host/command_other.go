//go:build !unix

package host

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// Init is how RunInit runs its command; nothing here uses it.
type Init struct {
	Group      bool
	Reaped     func(pid int, ws syscall.WaitStatus)
	Helper     []string
	HelperStop time.Duration
}

// Relayed are the signals RunCommand would pass on.
var Relayed = []os.Signal{os.Interrupt}

// RunCommand: `reaper run` needs process groups and wait4; none here.
func RunCommand(argv []string, started func(pid int)) (int, error) {
	return 0, fmt.Errorf("running a command on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// RunInit is RunCommand here.
func RunInit(argv []string, _ Init, started func(pid int)) (int, error) {
	return RunCommand(argv, started)
}

// DrainZombies: no zombies here.
func DrainZombies() int { return 0 }

// EndNamespace is Linux's alone (PID namespaces).
func EndNamespace(time.Duration) (int, bool, error) {
	return 0, false, errors.ErrUnsupported
}

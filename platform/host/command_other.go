//go:build !unix

package host

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// Relayed are the signals RunCommand would pass on.
var Relayed = []os.Signal{os.Interrupt}

// RunCommand: `reaper run` needs process groups and wait4; none here.
func RunCommand(argv []string, started func(pid int)) (int, error) {
	return 0, fmt.Errorf("running a command on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// DrainZombies: no zombies here.
func DrainZombies() int { return 0 }

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

func runCommand(argv []string, started func(pid int)) (int, error) {
	return 0, fmt.Errorf("running a command on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func drainZombies() int { return 0 }

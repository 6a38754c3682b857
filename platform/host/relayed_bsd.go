//go:build unix && !linux

package host

import (
	"os"
	"syscall"
)

// Relayed are the signals RunCommand passes on.
var Relayed = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

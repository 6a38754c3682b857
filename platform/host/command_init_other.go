//go:build !linux

package host

import (
	"errors"
	"time"
)

// Init is how RunInit runs its command (Linux: see init_linux.go).
type Init struct {
	Group  bool
	Reaped func(pid int)
}

// RunInit is RunCommand here: with no subreaper, this process adopts
// nothing, so it has no zombies but its command's to reap.
func RunInit(argv []string, _ Init, started func(pid int)) (int, error) {
	return RunCommand(argv, started)
}

// EndNamespace is Linux's alone (PID namespaces).
func EndNamespace(time.Duration) (int, bool, error) {
	return 0, false, errors.ErrUnsupported
}

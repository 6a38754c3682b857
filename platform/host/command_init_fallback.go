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

func runInit(argv []string, _ Init, started func(pid int)) (int, error) {
	return RunCommand(argv, started)
}

func endNamespace(time.Duration) (int, bool, error) {
	return 0, false, errors.ErrUnsupported
}

//go:build !linux && !freebsd && !darwin

package notify

import "runtime"

// Open: no desktop notifier reaper knows here.
func Open(func(string) string) (Desktop, string) {
	return nil, "no desktop notifier on " + runtime.GOOS + ": notifications off"
}

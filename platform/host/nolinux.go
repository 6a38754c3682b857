//go:build !linux

package host

import (
	"errors"
	"fmt"
	"runtime"
)

// JournalEnabled: there is no journald here.
func JournalEnabled() bool { return false }

// JournalSend is not implemented on this platform.
func JournalSend(message string, priority int, fields map[string]string) error {
	return fmt.Errorf("journald on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// HostPIDNamespace: there are no PID namespaces here; the table is the
// host's.
func HostPIDNamespace() bool { return true }

// SystemdBooted: systemd runs on Linux alone.
func SystemdBooted() bool { return false }

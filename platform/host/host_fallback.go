//go:build !linux

package host

import (
	"errors"
	"fmt"
	"runtime"
)

func journalEnabled() bool { return false }

func journalSend(message string, priority int, fields map[string]string) error {
	return fmt.Errorf("journald on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func hostPIDNamespace() bool { return true }

func systemdBooted() bool { return false }

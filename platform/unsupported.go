//go:build !linux && !darwin

package platform

import (
	"errors"
	"fmt"
	"runtime"
)

// DefaultProcRoot has no meaning where there is no procfs.
const DefaultProcRoot = ""

// ReadSnapshot is not implemented on this platform: it fails loudly rather
// than returning an empty table that would read as "no orphans".
func ReadSnapshot(root string) (*Snapshot, error) {
	return nil, fmt.Errorf("process snapshot on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// StartIdentity is not implemented on this platform.
func StartIdentity(pid int) (string, error) {
	return "", fmt.Errorf("start identity on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

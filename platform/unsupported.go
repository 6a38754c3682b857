//go:build !linux && !darwin

package platform

import (
	"errors"
	"fmt"
	"runtime"
	"time"
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

// RecordOwnerLive cannot tell here: every recorded pid counts as its
// writer's, alive — a chooser reads those records first, and what it
// leaves is its owner's doubt, never a proof.
func RecordOwnerLive(pid int, uid uint32, written time.Time) bool { return pid > 0 }

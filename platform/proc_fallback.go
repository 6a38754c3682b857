//go:build !linux && !darwin && !windows

package platform

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// DefaultProcRoot has no meaning where there is no procfs.
const DefaultProcRoot = ""

func readSnapshot(root string) (*Snapshot, error) {
	return nil, fmt.Errorf("process snapshot on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func startIdentity(pid int) (string, error) {
	return "", fmt.Errorf("start identity on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func recordOwnerLive(pid int, uid uint32, written time.Time) bool { return pid > 0 }

//go:build !linux && !darwin

package child

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// ChildSpec is a reader child; none run on this platform.
type ChildSpec struct {
	Args           []string
	Env            []string
	Drop           bool
	UID, GID       uint32
	MaxOut, MaxErr int
	Buf            []byte
}

func available() bool { return false }

func runChildOS(ctx context.Context, spec ChildSpec) ([]byte, error) {
	return nil, fmt.Errorf("reader child on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Limits are a reader child's limits.
type Limits struct {
	Data, CPU, Files uint64
	Memory           int64
}

func limitSelf(l Limits) error {
	return fmt.Errorf("resource limits on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

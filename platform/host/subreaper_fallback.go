//go:build !linux

package host

import (
	"errors"
	"fmt"
	"runtime"
)

func becomeSubreaper() error {
	return fmt.Errorf("a child subreaper on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

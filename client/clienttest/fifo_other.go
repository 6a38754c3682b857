//go:build !unix

package clienttest

import (
	"errors"
	"fmt"
	"runtime"
)

// mkfifo: no FIFOs here.
func mkfifo(p string) error {
	return fmt.Errorf("mkfifo on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

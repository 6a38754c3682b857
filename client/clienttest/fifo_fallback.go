//go:build !unix

package clienttest

import (
	"errors"
	"fmt"
	"runtime"
)

// mkfifo: no FIFOs here.
func mkfifo(p string) error { return Mkfifo(p, 0o644) }

// Mkfifo: no FIFOs here.
func Mkfifo(p string, mode uint32) error {
	return fmt.Errorf("mkfifo on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

//go:build linux || darwin

package kill

import (
	"errors"
	"fmt"
	"syscall"
)

// signalError maps the result of a signal to the seam's errors: ESRCH is
// ErrGone (gone is success for a reaper), EPERM is ErrPermission.
func signalError(pid int, sig Signal, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ESRCH):
		return fmt.Errorf("pid %d: %w", pid, ErrGone)
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("pid %d: %w", pid, ErrPermission)
	}
	return fmt.Errorf("signal %s to %d: %w", signalName(sig), pid, err)
}

// endCall: see EndCall.
const endCall = ""

package host

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER, prctl(2)): an orphaned descendant is reparented
// to it rather than to init, so it can reap what a command it ran left.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_CHILD_SUBREAPER: %w", err)
	}
	return nil
}

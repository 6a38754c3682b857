//go:build !linux

package host

import (
	"errors"
	"fmt"
	"runtime"
)

// BecomeSubreaper: there are no child subreapers on this platform (macOS
// has none); what a command leaves is reparented to launchd or init.
func BecomeSubreaper() error {
	return fmt.Errorf("a child subreaper on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// lockError says another reaper holds the lock, and which, where the
// kernel says.
type lockError struct{ *platform.LockBusyError }

func (e lockError) Error() string {
	who := "another reaper"
	if e.Holder > 0 {
		who = fmt.Sprintf("another reaper, pid %d", e.Holder)
		if e.Cmd != "" {
			who += " (" + audit.Printable(e.Cmd) + ")"
		}
		who += ","
	}
	return fmt.Sprintf("%s holds %s; gave up after waiting %s: one reaper runs at a time (--lock-timeout waits longer)", who, e.Path, e.Wait)
}

// lock takes the one-reaper-at-a-time lock at path (platform.Lock),
// waiting up to wait, and returns its release; the errors say what a
// user can do about them.
func lock(path string, wait time.Duration) (func(), error) {
	if dir := filepath.Dir(path); dir != "" {
		os.MkdirAll(dir, 0o700) // the user's cache dir may not exist yet
	}
	release, err := platform.Lock(path, wait)
	var busy *platform.LockBusyError
	switch {
	case errors.As(err, &busy):
		return nil, lockError{busy}
	case err != nil:
		return nil, fmt.Errorf("lock: %w: not used (pass --lock-file in a directory only you can write)", err)
	}
	return release, nil
}

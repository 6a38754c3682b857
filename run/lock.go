package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
)

// LockPath is the one-reaper-at-a-time lock of this host and user: in
// /run for root, in $XDG_RUNTIME_DIR otherwise (a directory only its user
// can write, runtime-dir(7)), else in the user's cache dir. Never in a
// directory every user can write, such as /tmp: another user who created
// the file first would hold the lock, or own the file, and stop this
// user's reaper on every run.
func LockPath() string {
	if EUID() == 0 {
		return "/run/reaper.lock"
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "reaper.lock")
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "reaper", "reaper.lock")
	}
	return filepath.Join(os.TempDir(), "reaper-"+strconv.Itoa(int(EUID()))+".lock") // refused below if another user's
}

// lockError says another reaper holds the lock, and which, where the
// kernel says (holder 0: not known).
type lockError struct {
	path   string
	wait   time.Duration
	holder int
	cmd    string
}

func (e *lockError) Error() string {
	who := "another reaper"
	if e.holder > 0 {
		who = fmt.Sprintf("another reaper, pid %d", e.holder)
		if e.cmd != "" {
			who += " (" + audit.Printable(e.cmd) + ")"
		}
		who += ","
	}
	return fmt.Sprintf("%s holds %s; gave up after waiting %s: one reaper runs at a time (--lock-timeout waits longer)", who, e.path, e.wait)
}

// Lock takes an exclusive flock(2) on path, waiting up to wait. The
// lock goes with the process: a reaper that dies releases it. It returns
// the release function.
//
// The file must be the reaper's own (platform.OpenOwn): a link is not
// followed, a FIFO never blocks the open, and a file another user owns
// (made first in a directory they can write) is refused with an error
// naming its owner rather than waited on.
func Lock(path string, wait time.Duration) (func(), error) {
	if dir := filepath.Dir(path); dir != "" {
		os.MkdirAll(dir, 0o700) // the user's cache dir may not exist yet
	}
	f, err := platform.OpenOwn(path, platform.OwnLock)
	if err != nil {
		return nil, fmt.Errorf("lock: %w: not used (pass --lock-file in a directory only you can write)", err)
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := platform.TryLock(f)
		if ok {
			return func() { f.Close() }, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			e := &lockError{path: path, wait: wait}
			e.holder, e.cmd = host.LockHolder(f)
			f.Close()
			return nil, e
		}
		time.Sleep(50 * time.Millisecond)
	}
}

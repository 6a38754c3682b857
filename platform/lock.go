package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// LockBusyError says another process holds a lock: which one, where the
// kernel lists flock holders (Holder 0: not known).
type LockBusyError struct {
	Path   string
	Wait   time.Duration // how long Lock waited for it
	Holder int
	Cmd    string // the holder's command line, cut to 80 runes
}

func (e *LockBusyError) Error() string {
	if e.Holder > 0 {
		return fmt.Sprintf("%s is held by pid %d", e.Path, e.Holder)
	}
	return e.Path + " is held by another process"
}

// Lock takes an exclusive flock(2) on the file at path, waiting up to
// wait, and returns its release. The lock goes with the process: one that
// dies releases it. A lock held past wait is a *LockBusyError naming the
// holder.
//
// The file must be one of reaper's own (OpenOwn, OwnLock): a link is not
// followed, a FIFO never blocks the open, and a file another user owns —
// made first in a directory they can write — is refused, never waited on.
func Lock(path string, wait time.Duration) (release func(), err error) {
	f, err := OpenOwn(path, OwnLock)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := TryLock(f)
		if ok {
			return func() { f.Close() }, nil
		}
		if err != nil {
			f.Close()
			return nil, &FileError{path, err}
		}
		if time.Now().After(deadline) {
			e := &LockBusyError{Path: path, Wait: wait}
			e.Holder, e.Cmd = lockHolder(f)
			f.Close()
			return nil, e
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// LockState looks at the lock at path without taking it: the process
// that holds it (0: free, or a holder this system does not list), or the
// error that opening it as one of reaper's own files (OpenOwn) met —
// fs.ErrNotExist when there is none yet.
func LockState(path string) (holder int, cmd string, err error) {
	f, err := OpenOwn(path, OwnRead)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	holder, cmd = lockHolder(f)
	return holder, cmd, nil
}

// Unmakeable reports whether an error of Lock is the file not being
// makeable — a read-only file system, a missing directory, no permission
// — rather than a lock another process holds or a file not reaper's own.
func Unmakeable(err error) bool {
	var pe *fs.PathError
	var fe *FileError
	return (errors.As(err, &pe) || errors.As(err, &fe)) && (readOnlyFS(err) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission))
}

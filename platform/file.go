package platform

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the bounded file reads. A root reaper reads files that ordinary
// users control (their OpenClaw state, ledgers in their homes); each of
// these is a refusal to read, and none quotes the file's content.
var (
	// ErrNotRegular: the path is a FIFO, a device, a socket or a directory.
	// Opening a FIFO for reading blocks until a writer appears (fifo(7)),
	// and a device such as /dev/zero never ends.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the reader's cap.
	ErrTooLarge = errors.New("larger than the size cap")
	// ErrSymlink: a symbolic link where none may be followed.
	ErrSymlink = errors.New("a symbolic link, not followed")
	// ErrNotOwner: the file is not owned by the user whose state it is.
	ErrNotOwner = errors.New("not owned by the state's user")
)

// FileError says which file a bounded read refused or failed, and why.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// AnyOwner is the owner argument of ReadBeneath that accepts any owner.
const AnyOwner = -1

// capError is ErrTooLarge with the cap named.
func capError(max int64) error {
	if max >= 1<<20 && max%(1<<20) == 0 {
		return fmt.Errorf("%w (%d MiB)", ErrTooLarge, max>>20)
	}
	return fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
}

// FileStamp is what a write to a file changes: its size and its
// modification and change times (ns).
type FileStamp struct {
	Size         int64
	Mtime, Ctime int64
}

// How OpenOwn opens one of reaper's own files.
type OwnOpen int

const (
	// OwnRead opens an existing file for reading.
	OwnRead OwnOpen = iota
	// OwnLock opens the file read-only, making it when it is missing:
	// flock(2) needs no write access, so a file that is not the reaper's
	// is never written.
	OwnLock
	// OwnTruncate opens the file for writing, making it when it is
	// missing, and empties it once it is proven the reaper's own.
	OwnTruncate
	// OwnAppend opens the file for appending (O_APPEND: each write(2) of
	// a line lands whole at the end), making it (mode 0640) when it is
	// missing: the audit log.
	OwnAppend
)

// ErrNotOwn: the path holds something other than a file of this reaper's
// own — a FIFO, a device, a directory, another user's file, a file with a
// second name (a hard link), or a symbolic link (ErrSymlink).
var ErrNotOwn = errors.New("not a file of this reaper's own")

// FileID is a file's identity — its device and inode — and its owner.
type FileID struct {
	Dev, Ino uint64
	UID      int
}

// InProcFS reports whether the clean absolute path is /proc or below it,
// where a path names whatever the reading process has (/proc/self/cwd,
// /proc/self/root), not a file of its own.
func InProcFS(path string) bool { return path == "/proc" || strings.HasPrefix(path, "/proc/") }

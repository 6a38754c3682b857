//go:build !unix

package platform

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// The file functions of file_unix.go, own_unix.go and speaker_unix.go on
// a system that is not unix: each fails with errors.ErrUnsupported, naming
// the system, rather than reading or writing a file by rules it cannot
// keep there (O_NOFOLLOW, O_NONBLOCK, fstat after open, flock). A port
// breaks here, in platform, and nowhere else.

func unsupported(what string) error {
	return fmt.Errorf("%s on %s: %w", what, runtime.GOOS, errors.ErrUnsupported)
}

// ReadFile is not implemented here.
func ReadFile(path string, max int64) ([]byte, error) {
	return nil, &FileError{path, unsupported("reading a file without blocking")}
}

// ReadFileOwner is not implemented here.
func ReadFileOwner(path string, max int64) ([]byte, uint32, error) {
	return nil, 0, &FileError{path, unsupported("reading a file and its owner")}
}

// ReadBeneath is not implemented here.
func ReadBeneath(dir, rel string, max int64, owner int) ([]byte, error) {
	return nil, &FileError{dir + "/" + rel, unsupported("reading below a directory without links")}
}

// OpenBeneath is not implemented here.
func OpenBeneath(dir, rel string, owner int) (*os.File, error) {
	return nil, &FileError{dir + "/" + rel, unsupported("opening below a directory without links")}
}

// Stamp is not implemented here.
func Stamp(f *os.File) (FileStamp, error) { return FileStamp{}, unsupported("a file's stamp") }

// DirOwner is not implemented here.
func DirOwner(path string) (int, error) { return -1, unsupported("a directory's owner") }

// DirOwnerNoLinks is not implemented here.
func DirOwnerNoLinks(path string) (uint32, error) { return 0, unsupported("a directory's owner") }

// OpenDirNoLinks is not implemented here.
func OpenDirNoLinks(path string, owner int) (int, error) {
	return -1, unsupported("opening a directory without links")
}

// Writable is not implemented here.
func Writable(dir string) error { return unsupported("a directory's write access") }

// OpenDir is not implemented here.
func OpenDir(path string) (*os.File, error) { return nil, unsupported("opening a directory") }

// DirNames is not implemented here.
func DirNames(path string, n int) ([]string, error) { return nil, unsupported("listing a directory") }

// WhoCanReplace is not implemented here.
func WhoCanReplace(path string) (string, error) {
	return "", unsupported("who can replace a file")
}

// FileUID knows no owner here.
func FileUID(fi os.FileInfo) (uint32, bool) { return 0, false }

// FileOwner knows no owner here.
func FileOwner(fi os.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }

// Kernel is the system's name here.
func Kernel() string { return runtime.GOOS }

// OpenOwn is not implemented here.
func OpenOwn(path string, how OwnOpen) (*os.File, error) {
	return nil, &FileError{path, unsupported("opening one of reaper's own files")}
}

// ReadOwn is not implemented here.
func ReadOwn(path string, max int64) ([]byte, error) {
	return nil, &FileError{path, unsupported("reading one of reaper's own files")}
}

// TryLock is not implemented here.
func TryLock(f *os.File) (bool, error) { return false, unsupported("a file lock") }

// WriteOwn is not implemented here.
func WriteOwn(path string, data []byte, perm os.FileMode) error {
	return &FileError{path, unsupported("writing one of reaper's own files")}
}

// PathSpeaker is not implemented here: no path is anyone's word.
func PathSpeaker(path string) (uid, gid uint32, err error) {
	return 0, 0, unsupported("whose a path is")
}

// readOnlyFS is not told apart here.
func readOnlyFS(error) bool { return false }

// StatID is not known where files have no unix owner.
func StatID(path string) (FileID, bool) { return FileID{}, false }

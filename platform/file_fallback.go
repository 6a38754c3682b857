//go:build !unix && !windows

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

func readFile(path string, max int64) ([]byte, error) {
	return nil, &FileError{path, unsupported("reading a file without blocking")}
}

func readFileOwner(path string, max int64) ([]byte, uint32, error) {
	return nil, 0, &FileError{path, unsupported("reading a file and its owner")}
}

func readBeneath(dir, rel string, max int64, owner int) ([]byte, error) {
	return nil, &FileError{dir + "/" + rel, unsupported("reading below a directory without links")}
}

func openBeneathOS(dir, rel string, owner int) (*os.File, error) {
	return nil, &FileError{dir + "/" + rel, unsupported("opening below a directory without links")}
}

func stamp(f *os.File) (FileStamp, error) { return FileStamp{}, unsupported("a file's stamp") }

func dirOwner(path string) (int, error) { return -1, unsupported("a directory's owner") }

func dirOwnerNoLinks(path string) (uint32, error) { return 0, unsupported("a directory's owner") }

func openDirNoLinks(path string, owner int) (int, error) {
	return -1, unsupported("opening a directory without links")
}

func writable(dir string) error { return unsupported("a directory's write access") }

func openDirOS(path string) (*os.File, error) { return nil, unsupported("opening a directory") }

func dirNames(path string, n int) ([]string, error) { return nil, unsupported("listing a directory") }

func whoCanReplace(path string) (string, error) {
	return "", unsupported("who can replace a file")
}

func fileUID(string, os.FileInfo) (uint32, bool) { return 0, false }

func isExecutable(_ string, fi os.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func fileOwner(fi os.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }

func kernel() string { return runtime.GOOS }

func openOwn(path string, how OwnOpen) (*os.File, error) {
	return nil, &FileError{path, unsupported("opening one of reaper's own files")}
}

func readOwn(path string, max int64) ([]byte, error) {
	return nil, &FileError{path, unsupported("reading one of reaper's own files")}
}

func tryLock(f *os.File) (bool, error) { return false, unsupported("a file lock") }

func writeOwn(path string, data []byte, perm os.FileMode) error {
	return &FileError{path, unsupported("writing one of reaper's own files")}
}

func pathSpeaker(path string) (uid, gid uint32, err error) {
	return 0, 0, unsupported("whose a path is")
}

// readOnlyFS is not told apart here.
func readOnlyFS(error) bool { return false }

func statID(path string) (FileID, bool) { return FileID{}, false }

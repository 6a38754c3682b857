//go:build unix

package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

func openOwn(path string, how OwnOpen) (*os.File, error) {
	fd, err := openOwnFD(path, how)
	if err != nil {
		return nil, &FileError{path, err}
	}
	if err := checkOwn(fd); err != nil {
		unix.Close(fd)
		return nil, &FileError{path, err}
	}
	if how == OwnTruncate {
		if err := unix.Ftruncate(fd, 0); err != nil {
			unix.Close(fd)
			return nil, &FileError{path, err}
		}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func readOwn(path string, max int64) ([]byte, error) {
	f, err := OpenOwn(path, OwnRead)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readRegular(int(f.Fd()), max, AnyOwner)
	if err != nil {
		return nil, &FileError{path, err}
	}
	return b, nil
}

func openOwnFD(path string, how OwnOpen) (int, error) {
	access, mode := unix.O_RDONLY, uint32(0o600)
	switch how {
	case OwnTruncate:
		access = unix.O_WRONLY
	case OwnAppend:
		access, mode = unix.O_WRONLY|unix.O_APPEND, 0o640
	}
	flags := access | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	// The directory part without a link another user could plant
	// (openDir), then the name in it.
	dir, err := openDir(filepath.Dir(path))
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	base := filepath.Base(path)
	for range 8 {
		fd, err := openName(dir, base, flags)
		if how == OwnRead || !errors.Is(err, unix.ENOENT) {
			return fd, ownOpenError(err)
		}
		fd, err = openCreate(dir, base, flags|unix.O_CREAT|unix.O_EXCL, mode)
		if !errors.Is(err, unix.EEXIST) {
			return fd, ownOpenError(err)
		}
		// Made by someone else between the two opens: open what is there
		// now, and check it.
	}
	return -1, fmt.Errorf("%w: it keeps appearing and vanishing", ErrNotOwn)
}

// openCreate makes the file name in dir, in mode (less the umask).
func openCreate(dir int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, mode)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// ownOpenError names what the open refused: a link (ELOOP under
// O_NOFOLLOW), or a FIFO with no reader (ENXIO under O_NONBLOCK).
func ownOpenError(err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return ErrSymlink
	case errors.Is(err, unix.ENXIO):
		return fmt.Errorf("%w: a FIFO or a device", ErrNotOwn)
	}
	return err
}

// checkOwn says whether fd is a regular file of this process's euid with
// one link.
func checkOwn(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return ownStat(&st)
}

// ownStat says whether st is a regular file of this process's euid with
// one link.
func ownStat(st *unix.Stat_t) error {
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFIFO:
		return fmt.Errorf("%w: a FIFO", ErrNotOwn)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%w: %w", ErrNotOwn, ErrNotRegular)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%w: owned by uid %d, not this reaper's uid %d", ErrNotOwn, st.Uid, os.Geteuid())
	case st.Nlink != 1:
		return fmt.Errorf("%w: it has %d names (a hard link)", ErrNotOwn, st.Nlink)
	}
	return nil
}

func tryLock(f *os.File) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

func writeOwn(path string, data []byte, perm os.FileMode) error {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return &FileError{path, err}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return &FileError{path, ErrSymlink}
	default:
		if err := ownStat(&st); err != nil {
			return &FileError{path, err}
		}
	}
	return WriteFileAtomic(path, data, perm)
}

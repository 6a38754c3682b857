//go:build unix

package platform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func readFile(path string, max int64) ([]byte, error) {
	b, _, err := ReadFileOwner(path, max)
	return b, err
}

func readFileOwner(path string, max int64) ([]byte, uint32, error) {
	fd, err := openNonblock(unix.AT_FDCWD, path, 0)
	if err != nil {
		return nil, 0, &FileError{path, err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, &FileError{path, err}
	}
	b, err := readRegular(fd, max, AnyOwner)
	if err != nil {
		return nil, 0, &FileError{path, err}
	}
	return b, st.Uid, nil
}

func readBeneath(dir, rel string, max int64, owner int) ([]byte, error) {
	path := filepath.Join(dir, rel)
	fd, err := openBeneath(dir, rel)
	if err != nil {
		return nil, &FileError{path, err}
	}
	defer unix.Close(fd)
	b, err := readRegular(fd, max, owner)
	if err != nil {
		return nil, &FileError{path, err}
	}
	return b, nil
}

func openBeneathOS(dir, rel string, owner int) (*os.File, error) {
	path := filepath.Join(dir, rel)
	fd, err := openBeneath(dir, rel)
	if err != nil {
		return nil, &FileError{path, err}
	}
	if _, err := regularSize(fd, owner); err != nil {
		unix.Close(fd)
		return nil, &FileError{path, err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func stamp(f *os.File) (FileStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return FileStamp{}, err
	}
	return FileStamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, nil
}

func dirOwner(path string) (int, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return int(st.Uid), nil
	case unix.S_IFLNK:
		return 0, ErrSymlink
	}
	return 0, fmt.Errorf("%s: not a directory", path)
}

// openBeneath opens rel below dir, following no symbolic link below dir.
func openBeneath(dir, rel string) (int, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		return -1, fmt.Errorf("path %q is not below the directory", rel)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		next, err := openName(dfd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		unix.Close(dfd)
		if err != nil {
			return -1, nofollowError(err)
		}
		dfd = next
	}
	defer unix.Close(dfd)
	fd, err := openNonblock(dfd, parts[len(parts)-1], unix.O_NOFOLLOW)
	return fd, nofollowError(err)
}

// openNonblock opens name relative to dirfd for reading, never blocking
// and never taking a controlling terminal.
func openNonblock(dirfd int, name string, flags int) (int, error) {
	return openName(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC|flags)
}

func openName(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// nofollowError names what O_NOFOLLOW refused: ELOOP for a symbolic link as
// the last component, ENOTDIR for one as a directory (open(2)).
func nofollowError(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return ErrSymlink
	}
	return err
}

// regularSize checks with fstat that fd is a regular file owned by owner
// (unless AnyOwner) and returns its size.
func regularSize(fd int, owner int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, ErrNotRegular
	}
	if owner != AnyOwner && int(st.Uid) != owner {
		return 0, fmt.Errorf("%w: owned by uid %d, the state is uid %d's", ErrNotOwner, st.Uid, owner)
	}
	return st.Size, nil
}

// readRegular reads fd, a regular file of at most max bytes. The size is
// checked before the read and again by the read itself: a file that grows
// in between is cut at max+1 and refused.
func readRegular(fd int, max int64, owner int) ([]byte, error) {
	size, err := regularSize(fd, owner)
	if err != nil {
		return nil, err
	}
	if size > max {
		return nil, capError(max)
	}
	buf := make([]byte, 0, min(size, max)+1)
	for {
		if int64(len(buf)) > max {
			return nil, capError(max)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func dirOwnerNoLinks(path string) (uint32, error) {
	fd, err := OpenDirNoLinks(path, AnyOwner)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Uid, nil
}

func openDirNoLinks(path string, owner int) (int, error) {
	if !filepath.IsAbs(path) {
		return -1, fmt.Errorf("%s: not an absolute path", path)
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		if part == "" {
			continue
		}
		next, err := openName(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
		if errors.Is(err, unix.ENOTDIR) {
			// O_DIRECTORY|O_NOFOLLOW on a link fails ENOTDIR, as on a file:
			// say which it is.
			var st unix.Stat_t
			if unix.Fstatat(fd, part, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = ErrSymlink
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, &FileError{path, nofollowError(err)}
		}
		fd = next
	}
	if owner != AnyOwner {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if int(st.Uid) != owner {
			unix.Close(fd)
			return -1, &FileError{path, fmt.Errorf("%w: owned by uid %d, the state is uid %d's", ErrNotOwner, st.Uid, owner)}
		}
	}
	return fd, nil
}

func writable(dir string) error {
	return unix.Access(dir, unix.W_OK)
}

func openDirOS(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &FileError{path, err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func dirNames(path string, n int) ([]string, error) {
	f, err := OpenDir(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, &FileError{path, err}
	}
	return names, nil
}

func whoCanReplace(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s: not an absolute path", path)
	}
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return "", &FileError{p, err}
		}
		sticky := st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&unix.S_ISVTX != 0
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return fmt.Sprintf("%s is a symbolic link, which its directory's writers can repoint", p), nil
		case st.Uid != 0:
			return fmt.Sprintf("%s belongs to uid %d", p, st.Uid), nil
		case st.Mode&0o002 != 0 && !sticky:
			return fmt.Sprintf("%s is writable by every user", p), nil
		case st.Mode&0o020 != 0 && st.Gid != 0 && !sticky:
			return fmt.Sprintf("%s is writable by group %d", p, st.Gid), nil
		}
		if who, err := aclWriter(p); err != nil || who != "" {
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s: %s", p, who), nil
		}
		if p == "/" {
			return "", nil
		}
	}
}

func isExecutable(_ string, fi os.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func fileUID(_ string, fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

func fileOwner(fi os.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return strings.TrimSpace(unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:]))
}

// readOnlyFS reports whether err is EROFS: a write to a read-only file
// system.
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

func statID(path string) (FileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, false
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino), UID: int(st.Uid)}, true
}

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

// ReadFile reads the regular file at path, of at most max bytes, without
// ever blocking in open(2) or read(2): it is opened O_NONBLOCK, so a FIFO
// opens at once instead of waiting for a writer (fifo(7)), and fstat(2) on
// the open descriptor must say it is a regular file within the cap before
// a byte is read. The last component may be a symbolic link (an
// administrator's /etc/reaper/policy.toml may be one); what it names must
// be a regular file.
func ReadFile(path string, max int64) ([]byte, error) {
	b, _, err := ReadFileOwner(path, max)
	return b, err
}

// ReadFileOwner is ReadFile, and also returns the uid that owns the file
// read (by fstat of the descriptor read, not by name again): whose word
// the file is.
func ReadFileOwner(path string, max int64) ([]byte, uint32, error) {
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

// ReadBeneath reads the regular file rel below the directory dir, as
// ReadFile does, and more strictly: no symbolic link below dir is followed
// (each component is opened O_NOFOLLOW relative to the one before, which
// Linux's openat2 RESOLVE_NO_SYMLINKS does in one call where it exists), and
// unless owner is AnyOwner the file must belong to that uid. It is how a
// root reaper reads a user's state: a link to /etc/shadow, a hard link to
// another user's file, a FIFO or /dev/zero in place of a lease file are
// each refused, and the error never quotes the file.
func ReadBeneath(dir, rel string, max int64, owner int) ([]byte, error) {
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

// OpenBeneath opens the regular file rel below dir for reading as
// ReadBeneath does (no symbolic link below dir followed, never blocking, a
// regular file of owner's unless AnyOwner) and returns it open: for a file
// another library reads through the descriptor, never by name again.
func OpenBeneath(dir, rel string, owner int) (*os.File, error) {
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

// Stamp returns the open file's FileStamp, from fstat(2).
func Stamp(f *os.File) (FileStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return FileStamp{}, err
	}
	return FileStamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, nil
}

// DirOwner returns the uid that owns the directory at path; a symbolic link
// at path is not followed.
func DirOwner(path string) (int, error) {
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

// DirOwnerNoLinks returns the uid that owns the directory at the absolute
// path, reached from / one component at a time with O_NOFOLLOW: a path
// with a symbolic link anywhere in it is refused (ErrSymlink), so what is
// checked is the directory the path names and not one a link points at.
func DirOwnerNoLinks(path string) (uint32, error) {
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

// OpenDirNoLinks opens the directory at the absolute path for reading,
// reached from / one component at a time with O_NOFOLLOW|O_DIRECTORY: a
// symbolic link anywhere on the way is refused (ErrSymlink), so a user
// who swaps a directory of theirs on the way for a link cannot make root
// open another one. Unless owner is AnyOwner the directory must be that
// uid's (ErrNotOwner). It returns the descriptor, which the caller closes.
func OpenDirNoLinks(path string, owner int) (int, error) {
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

// Writable reports, as access(2) does for the real uid, whether this
// process may create files in dir.
func Writable(dir string) error {
	return unix.Access(dir, unix.W_OK)
}

// OpenDir opens the directory path for listing: never a symbolic link at
// its end, never anything but a directory, and never blocking (a FIFO a
// user put where a directory should be fails at once, ENOTDIR).
func OpenDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &FileError{path, err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// DirNames lists at most n names in the directory path, opened as OpenDir
// opens it: an empty directory is no error, and neither is a longer one
// (the rest is not read).
func DirNames(path string, n int) ([]string, error) {
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

// WhoCanReplace says how a user other than root could replace what runs
// as the file at path — by writing the file, or by renaming or removing
// it or any directory above it, which rename(2) and unlink(2) allow to
// whoever may write the directory (the sticky bit aside: then only the
// entry's owner, the directory's, or root) — or "" when only root can.
// Every component from the file up to / must be root's and writable by
// no one else: group write is allowed only to group 0, and an access ACL
// entry that grants write to another user or group is refused on Linux
// (acl(5): the mode's group bits are then the ACL's mask, and a
// "u:alice:rwx" entry hides behind drwxrwxr-x root:root). A symbolic link on
// the way is refused, not followed: the caller resolves the path first,
// so that what is checked is what runs. It is how a root service refuses
// a binary that `go install` or npm put in a user's directory: whoever
// can replace it runs code as root at the next start.
func WhoCanReplace(path string) (string, error) {
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

// FileUID is the uid that owns the file fi describes (from os.Stat or
// os.Lstat); false where the system gives none.
func FileUID(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// FileOwner is the uid and gid that own fi, from its stat.
func FileOwner(fi os.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}

// Kernel is the kernel's release and version as uname(2) gives them
// ("6.8.0-45-generic #45-Ubuntu SMP …"), "" where it fails.
func Kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return strings.TrimSpace(unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:]))
}

// readOnlyFS reports whether err is EROFS: a write to a read-only file
// system.
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// StatID returns the identity and owner of the file at path, following a
// link as stat(2) does.
func StatID(path string) (FileID, bool) {
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

//go:build unix

package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openDir opens the directory dir for the *at calls that then open a
// name in it, walking it one component at a time from / without
// following any link another user could have put there: a link on the
// way is followed only when it is root's or this process's euid's and
// sits in a directory that is root's or the euid's and that no one else
// can write — or, in a sticky directory anyone can write (/tmp), only
// its owner can replace (the kernel's fs.protected_symlinks rule). So a
// --lock-file below a directory a user can write cannot be turned, by
// that user's link in the directory part, into a file reaper makes in a
// directory of the user's choosing. A relative dir is taken from the
// working directory, which is the caller's own.
func openDir(dir string) (int, error) {
	if !filepath.IsAbs(dir) {
		wd, err := os.Getwd()
		if err != nil {
			return -1, err
		}
		dir = filepath.Join(wd, dir)
	}
	euid := uint32(os.Geteuid())
	comps := splitPath(dir)
	fd, err := unix.Open("/", pathOnly|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	cur := "/"
	for hops := 0; len(comps) > 0; {
		name := comps[0]
		comps = comps[1:]
		next, err := openName(fd, name, pathOnly|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err == nil {
			unix.Close(fd)
			fd, cur = next, filepath.Join(cur, name)
			continue
		}
		var st unix.Stat_t
		if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) || unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			unix.Close(fd)
			return -1, err
		}
		var parent unix.Stat_t
		if err := unix.Fstat(fd, &parent); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if why := untrustedLink(st, parent, euid); why != "" {
			unix.Close(fd)
			return -1, fmt.Errorf("%s: %w: %s", filepath.Join(cur, name), ErrSymlink, why)
		}
		if hops++; hops > 40 {
			unix.Close(fd)
			return -1, unix.ELOOP
		}
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(fd, name, buf)
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		target := string(buf[:n])
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		// Walk the link's target from / again, then what was left.
		comps = append(splitPath(target), comps...)
		unix.Close(fd)
		if fd, err = unix.Open("/", pathOnly|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return -1, err
		}
		cur = "/"
	}
	return fd, nil
}

// untrustedLink says why the link st, in the directory parent, may be
// another user's doing ("" when it cannot).
func untrustedLink(st, parent unix.Stat_t, euid uint32) string {
	ours := func(uid uint32) bool { return uid == 0 || uid == euid }
	switch {
	case !ours(st.Uid):
		return fmt.Sprintf("a link of uid %d's", st.Uid)
	case parent.Mode&0o002 != 0 && parent.Mode&unix.S_ISVTX != 0:
		return "" // sticky: only its owner (root's, the euid's) can replace it
	case !ours(parent.Uid):
		return fmt.Sprintf("a link in a directory of uid %d's", parent.Uid)
	case parent.Mode&0o022 != 0:
		return "a link in a directory others can write"
	}
	return ""
}

// splitPath is path's components, cleaned ("/a/../b" is b).
func splitPath(path string) []string {
	var out []string
	for _, c := range strings.Split(filepath.Clean("/"+path), "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// syncDir fsyncs the directory of dirfd, which openDir may have opened
// with O_PATH (no fsync on such a descriptor): through "." opened anew.
func syncDir(dirfd int) {
	fd, err := openName(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return
	}
	unix.Fsync(fd)
	unix.Close(fd)
}

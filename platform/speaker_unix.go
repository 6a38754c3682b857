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

func pathSpeaker(path string) (uid, gid uint32, err error) {
	if !filepath.IsAbs(path) {
		return 0, 0, fmt.Errorf("%s: not an absolute path", path)
	}
	uid, gid, links, err := speakerWalk(path)
	if err != nil || uid != 0 || !links {
		return uid, gid, err
	}
	// Root's own links on the way: what they lead to must be root's too.
	// The lexical walk proved no one else can change them.
	resolved, err := resolveExisting(path)
	if err != nil {
		return 0, 0, err
	}
	uid, gid, _, err = speakerWalk(resolved)
	return uid, gid, err
}

// speakerWalk walks path from / with lstat(2): the first component not
// root's names the speaker; else whether any component is a link of
// root's, and an error when another user could make or replace a
// component.
func speakerWalk(path string) (uid, gid uint32, links bool, err error) {
	p := "/"
	for _, part := range strings.Split(strings.Trim(filepath.Clean(path), "/"), "/") {
		if part == "" {
			continue
		}
		var dir unix.Stat_t
		if err := unix.Lstat(p, &dir); err != nil {
			return 0, 0, false, &FileError{p, err}
		}
		p = filepath.Join(p, part)
		var st unix.Stat_t
		err := unix.Lstat(p, &st)
		if errors.Is(err, unix.ENOENT) {
			// A name still to be made: whoever can write its directory
			// could make it first.
			if who := othersWrite(filepath.Dir(p), &dir, false); who != "" {
				return 0, 0, false, fmt.Errorf("%s is not there, and %s: not taken as root's", p, who)
			}
			return 0, 0, links, nil
		}
		if err != nil {
			return 0, 0, false, &FileError{p, err}
		}
		if st.Uid != 0 {
			return st.Uid, st.Gid, false, nil
		}
		if who := othersWrite(filepath.Dir(p), &dir, true); who != "" {
			return 0, 0, false, fmt.Errorf("%s: %s, who can replace %s", filepath.Dir(p), who, p)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			links = true
		}
	}
	return 0, 0, links, nil
}

// othersWrite says who other than root may write the directory dir that
// st describes ("" for no one): group write of a group other than 0,
// every user's write, or an ACL's write to another user or group (an ACL
// that cannot be read counts as one). A sticky directory protects the
// entries that are there (existing) from the others, not a name to be
// made.
func othersWrite(dir string, st *unix.Stat_t, existing bool) string {
	if existing && st.Mode&unix.S_ISVTX != 0 {
		return ""
	}
	switch {
	case st.Mode&0o002 != 0:
		return "it is writable by every user"
	case st.Mode&0o020 != 0 && st.Gid != 0:
		return fmt.Sprintf("it is writable by group %d", st.Gid)
	}
	who, err := aclWriter(dir)
	if err != nil {
		return err.Error()
	}
	return who
}

// resolveExisting resolves the links of path as far as it exists — a
// link to a name not yet made is followed to that name — keeping the rest
// as it is.
func resolveExisting(path string) (string, error) {
	for range 40 { // as the kernel's MAXSYMLINKS
		rest := ""
		next := ""
		for p := filepath.Clean(path); ; p = filepath.Dir(p) {
			r, err := filepath.EvalSymlinks(p)
			if err == nil {
				return filepath.Join(r, rest), nil
			}
			if !errors.Is(err, unix.ENOENT) || p == "/" {
				return "", err
			}
			if target, lerr := os.Readlink(p); lerr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(p), target)
				}
				next = filepath.Join(target, rest)
				break
			}
			rest = filepath.Join(filepath.Base(p), rest)
		}
		path = next
	}
	return "", &FileError{path, unix.ELOOP}
}

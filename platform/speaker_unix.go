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

// PathSpeaker is the user a path speaks for, as root must take it before
// it reads or writes there on someone's behalf (a client's settings under
// a $HOME that sudo kept, a hook's file): the owner of the first component
// on the way from / that is not root's — looked at with lstat(2), so a
// symbolic link counts as its own owner's and is not followed — and that
// owner's group (the component's gid). Root must act there only as that
// user, in a child the kernel bounds: a link the user planted on the way
// (~/.claude/settings.json -> /etc/docker/daemon.json, ~/.gemini ->
// /etc/cron.d) then leads where the user could write anyway, and nowhere
// else.
//
// A path whose every existing component is root's speaks for root (uid 0)
// only when no one else can change what it names: an error says who could
// where a directory on the way is writable by another user (the sticky
// bit, sticky(7)'s restricted deletion, protects an existing entry of
// root's, not a name still to be made). Root's own links are root's word;
// what they lead to is checked the same way, once resolved.
func PathSpeaker(path string) (uid, gid uint32, err error) {
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

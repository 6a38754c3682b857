//go:build unix

package statedir

import (
	"os"
	"syscall"
)

// dirID is a directory's identity and owner.
type dirID struct {
	dev, ino uint64
	uid      int
}

// statDir returns the identity and owner of the directory at path.
func statDir(path string) (dirID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return dirID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirID{}, false
	}
	return dirID{dev: uint64(st.Dev), ino: uint64(st.Ino), uid: int(st.Uid)}, true
}

// OwnerUID returns the uid owning path: a state dir's user.
func OwnerUID(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

//go:build unix

package openclaw

import (
	"os"
	"syscall"
)

// ownerUID returns the uid owning path: the OpenClaw user of a state dir.
func ownerUID(path string) (int, bool) {
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

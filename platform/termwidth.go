//go:build linux || darwin || freebsd

package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

func termWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

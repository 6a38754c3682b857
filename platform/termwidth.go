//go:build linux || darwin || freebsd

package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// TermWidth is the terminal f's width in columns (TIOCGWINSZ, tty_ioctl(4)),
// 0 when f is no terminal or the terminal has no size (a new
// pseudo-terminal's 0×0).
func TermWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

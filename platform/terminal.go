package platform

import (
	"strconv"
	"strings"
)

// Terminal is the pseudo-terminal a process is attached to.
type Terminal struct {
	// PTS is N of /dev/pts/N, or -1 when the process has none.
	PTS int
	// HungUp: the terminal's master was closed. The kernel then clears the
	// session's controlling tty (tty_nr reads 0) and devpts removes the
	// node, but the process still holds the slave as its stdio, which
	// /proc/PID/fd shows as "/dev/pts/N (deleted)".
	HungUp bool
}

// PTYShell reports whether p is a shell on a pseudo-terminal: it leads its
// session and has a /dev/pts terminal, as its controlling terminal or —
// once the master is gone and the kernel cleared that — as its stdio.
func (s *Snapshot) PTYShell(p *Process) bool {
	return p.SessionLeader() && s.Terminal(p).PTS >= 0
}

// Terminal returns the pseudo-terminal p is attached to: its controlling
// terminal when it has one, else the terminal its stdio points at. The
// second is read on first use, from the fd links in /proc, which needs the
// same uid as p or privilege.
func (s *Snapshot) Terminal(p *Process) Terminal {
	if n := p.PTS(); n >= 0 {
		return Terminal{PTS: n}
	}
	if s.load(p, detailStdio) {
		p.data().stdio = string(s.raw(p, detailStdio))
	}
	return parsePTSLink(p.view().stdio)
}

// parsePTSLink reads "/dev/pts/N" or "/dev/pts/N (deleted)".
func parsePTSLink(link string) Terminal {
	rest, ok := strings.CutPrefix(link, "/dev/pts/")
	if !ok {
		return Terminal{PTS: -1}
	}
	rest, hungUp := strings.CutSuffix(rest, " (deleted)")
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return Terminal{PTS: -1}
	}
	return Terminal{PTS: n, HungUp: hungUp}
}

package audit

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// UseColor says whether a table is coloured: when is --color's value
// (always, never, auto); auto colours a terminal (tty) unless NO_COLOR
// is set or TERM is dumb (no-color.org).
func UseColor(when string, tty bool) bool {
	switch when {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	if t := os.Getenv("TERM"); t == "" || t == "dumb" {
		return false
	}
	return tty
}

// UTF8Locale reports whether the locale the output is read in is UTF-8:
// the first of LC_ALL, LC_CTYPE and LANG that is set says (locale(7)); none
// set is the C locale, ASCII.
func UTF8Locale() bool {
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if l := os.Getenv(v); l != "" {
			l = strings.ToLower(l)
			return strings.Contains(l, "utf-8") || strings.Contains(l, "utf8")
		}
	}
	return false
}

// IsTerminal reports whether f is a terminal: what colour, a table's
// width, a progress line and a prompt ask.
func IsTerminal(f *os.File) bool { return platform.IsTerminal(f) }

// TermWidth is terminal f's width in columns, 0 when f is none (a table
// is then as wide as its rows).
func TermWidth(f *os.File) int { return platform.TermWidth(f) }

// StyleFor is how a table is drawn on w: ASCII trees where the locale is
// not UTF-8, colour as when (--color) says, headings unless noHeaders,
// and as wide as COLUMNS says, else as the terminal is; not a terminal
// (a pipe, a file), lines are not cut — a script or a pager gets the
// whole line.
func StyleFor(w io.Writer, when string, noHeaders bool) Style {
	f, _ := w.(*os.File)
	tty := f != nil && IsTerminal(f)
	st := Style{ASCII: !UTF8Locale(), Color: UseColor(when, tty), NoHeaders: noHeaders}
	switch n, err := strconv.Atoi(os.Getenv("COLUMNS")); {
	case err == nil && n > 0:
		st.Width = n
	case tty:
		st.Width = TermWidth(f)
	default:
		st.Width = Uncut
	}
	return st
}

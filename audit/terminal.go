package audit

import (
	"os"
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

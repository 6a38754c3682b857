package main

import (
	"os"
	"strconv"

	"github.com/orphanreaper/reaper/audit"
)

// colorWhens are the values --color takes.
var colorWhens = []string{"auto", "always", "never"}

// tableStyle is how a table is drawn on stdout: ASCII trees where the
// locale is not UTF-8, colour as --color says, headings unless
// --no-headers, and as wide as COLUMNS says, else as the terminal is; not
// a terminal (a pipe, a file), lines are not cut — a script or a pager
// gets the whole line.
func (g *globalOptions) tableStyle() audit.Style {
	st := audit.Style{ASCII: !audit.UTF8Locale(), Color: g.useColor(), NoHeaders: g.noHeaders}
	f, _ := g.stdout.(*os.File)
	switch n, err := strconv.Atoi(os.Getenv("COLUMNS")); {
	case err == nil && n > 0:
		st.Width = n
	case f != nil && audit.IsTerminal(f):
		st.Width = audit.TermWidth(f)
	default:
		st.Width = audit.Uncut
	}
	return st
}

// write prints v on stdout in format (table or json).
func (g *globalOptions) write(v audit.Tabular, format string) error {
	return audit.Write(g.stdout, v, format, g.tableStyle())
}

// useColor is --color, for stdout (audit.UseColor).
func (g *globalOptions) useColor() bool {
	f, _ := g.stdout.(*os.File)
	return audit.UseColor(g.color, f != nil && audit.IsTerminal(f))
}

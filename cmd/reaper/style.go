package main

import (
	"os"

	"github.com/orphanreaper/reaper/audit"
)

// colorWhens are the values --color takes.
var colorWhens = []string{"auto", "always", "never"}

// tableStyle is how a table is drawn on stdout: ASCII trees where the
// locale is not UTF-8, colour as --color says, headings unless
// --no-headers.
func (g *globalOptions) tableStyle() audit.Style {
	st := audit.Style{ASCII: !audit.UTF8Locale(), Color: g.useColor(), NoHeaders: g.noHeaders}
	if f, ok := g.stdout.(*os.File); ok {
		st.Width = audit.TermWidth(f)
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

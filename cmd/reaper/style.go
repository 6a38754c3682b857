package main

import (
	"os"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// colorWhens are the values --color takes.
var colorWhens = []string{"auto", "always", "never"}

// tableStyle is how a table is drawn on stdout: ASCII trees where the
// locale is not UTF-8, colour as --color says, headings unless
// --no-headers.
func (g *globalOptions) tableStyle() audit.Style {
	return audit.Style{ASCII: !utf8Locale(), Color: g.useColor(), NoHeaders: g.noHeaders}
}

// write prints v on stdout in format (table or json).
func (g *globalOptions) write(v audit.Tabular, format string) error {
	return audit.Write(g.stdout, v, format, g.tableStyle())
}

// useColor is --color: always or never decide; auto colours only a
// terminal, and not when NO_COLOR is set to anything but "" (no-color.org:
// a flag overrides it, the variable overrides the default) or TERM is
// unset or "dumb" (a terminal that cannot draw them).
func (g *globalOptions) useColor() bool {
	switch g.color {
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
	f, ok := g.stdout.(*os.File)
	return ok && platform.IsTerminal(f)
}

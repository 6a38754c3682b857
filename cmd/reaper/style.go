package main

import "github.com/orphanreaper/reaper/audit"

// colorWhens are the values --color takes.
var colorWhens = []string{"auto", "always", "never"}

// write prints v on stdout in format (table or json), drawn as --color
// and --no-headers say (audit.StyleFor).
func (g *globalOptions) write(v audit.Tabular, format string) error {
	return audit.Write(g.stdout, v, format, audit.StyleFor(g.stdout, g.color, g.noHeaders))
}

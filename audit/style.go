package audit

import "github.com/orphanreaper/reaper/policy"

// Style is how a table is drawn for where it goes. The zero Style is
// plain: box-drawing trees, no colour, every heading.
type Style struct {
	// ASCII draws trees with ASCII characters, for a terminal whose
	// locale is not UTF-8 (the caller decides, from LC_ALL, LC_CTYPE,
	// LANG).
	ASCII bool
	// Color marks outcomes and statuses with ANSI colours (SGR), for a
	// terminal that wants them: the caller decides, from --color, whether
	// stdout is a terminal, NO_COLOR and TERM.
	Color bool
	// NoHeaders leaves out a table's title line, column headings and sums,
	// and the line that says there is nothing: its rows only, for grep
	// and awk.
	NoHeaders bool
	// Width is the width in columns the views that cut long lines (ps)
	// cut them to: COLUMNS, or the terminal's; Uncut where stdout is no
	// terminal; 0, not known, and the views keep their own widths.
	Width int
}

// Uncut is a Width that cuts no line: a pipe's or a file's (every line
// is bounded by its sinks already: Term, UserText).
const Uncut = 1 << 20

// SGR parameters, each of two digits, so that every painted word is
// longer by the same nine bytes: a column of painted cells stays aligned
// in a tabwriter, which counts the escape bytes as width.
const (
	sgrBold   = "01"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
	sgrPlain  = "39" // the default colour: pads a cell that has none
)

// paint wraps s in the SGR code when the style has colour. s is reaper's
// own word, or a user's words already made Printable: no escape of a
// user's reaches the terminal either way.
func (st Style) paint(code, s string) string {
	if !st.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// outcomeColor is the colour of an outcome's words: done is green, what
// needs a look is yellow, a failure red, a plan cyan.
func outcomeColor(outcome policy.Outcome, deferred bool) string {
	switch {
	case deferred || outcome == policy.Deferred:
		return sgrPlain
	case outcome == policy.Killed || outcome == policy.Gone:
		return sgrGreen
	case outcome == policy.Refused || outcome == policy.Interrupted:
		return sgrYellow
	case outcome == policy.Failed:
		return sgrRed
	case outcome == policy.Planned:
		return sgrCyan
	}
	return sgrPlain
}

// statusColor is the colour of a doctor's check status.
func statusColor(status string) string {
	switch status {
	case CheckOK:
		return sgrGreen
	case CheckWarn:
		return sgrYellow
	case CheckFail:
		return sgrRed
	}
	return sgrPlain
}

package audit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Diagnosis is what `reaper doctor` found: one check for each thing the
// reaper needs of this host — the process table, pidfds, cgroup v2, its
// policy, the users' state, its lock, the timer that runs it, journald.
type Diagnosis struct {
	SchemaVersion int     `json:"schema_version"`
	Version       string  `json:"version"`
	Platform      string  `json:"platform"` // GOOS/GOARCH
	UID           int64   `json:"uid"`
	User          string  `json:"user"`
	Checks        []Check `json:"checks"`
	// OKLeftOut counts the checks that were ok and are not in Checks (-q
	// shows only the others): the count at the end is of every check.
	OKLeftOut int `json:"-"`
}

// The statuses of a check. A failed check is one the reaper cannot do its
// job with as it stands (doctor exits 1); a warning is a job done less
// well, or not done at all by design, which an operator should know of.
const (
	CheckOK   = "ok"
	CheckInfo = "info" // neither good nor bad: not applicable here, or a fact
	CheckWarn = "warn"
	CheckFail = "fail"
)

// Check is one thing doctor looked at.
type Check struct {
	// Name is short and fixed ("cgroup v2", "timer"): scripts select by it.
	Name   string `json:"name"`
	Status string `json:"status"`
	// Summary is what was found, in a line.
	Summary string `json:"summary"`
	// Details are the facts behind it, one per line.
	Details []string `json:"details,omitempty"`
	// Fix is what to do about a warning or failure.
	Fix string `json:"fix,omitempty"`
}

// termWidth is the terminal width the tables are made to fit.
const termWidth = 80

// WriteTable writes one block per check — status, name, summary, then the
// details and the fix indented below — and a count at the end, wrapped to
// 80 columns. st.NoHeaders leaves out the title line and the count.
func (d *Diagnosis) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	who := "uid " + strconv.FormatInt(d.UID, 10)
	if d.User != "" {
		who = d.User + " (" + who + ")"
	}
	if !st.NoHeaders {
		ew.printf("reaper %s (%s), running as %s\n\n", Printable(d.Version), Printable(d.Platform), Printable(who))
	}
	const nameWidth = 15
	indent := strings.Repeat(" ", 6+nameWidth)
	count := map[string]int{}
	for _, c := range d.Checks {
		count[c.Status]++
		head := st.paint(statusColor(c.Status), fmt.Sprintf("%-6s", Printable(c.Status))) + fmt.Sprintf("%-*s", nameWidth, Printable(c.Name))
		// What a check says can carry a user's words (a state dir's path,
		// a process's command line): escaped, as every table escapes them.
		for i, line := range Wrap(Printable(c.Summary), termWidth-len(indent)) {
			if i == 0 {
				ew.printf("%s%s\n", head, line)
			} else {
				ew.printf("%s%s\n", indent, line)
			}
		}
		for _, detail := range c.Details {
			for i, line := range Wrap(Printable(detail), termWidth-len(indent)-2) {
				lead := "- "
				if i > 0 {
					lead = "  "
				}
				ew.printf("%s%s%s\n", indent, lead, line)
			}
		}
		if c.Fix != "" {
			// The continuation lines are 5 columns narrower, for their
			// "     " (they were 5 columns over).
			for i, line := range wrapHanging("fix: "+Printable(c.Fix), termWidth-len(indent), termWidth-len(indent)-5) {
				if i > 0 {
					line = "     " + line
				}
				ew.printf("%s%s\n", indent, line)
			}
		}
	}
	if !st.NoHeaders {
		left := ""
		if d.OKLeftOut > 0 {
			left = fmt.Sprintf(" (%d ok not shown)", d.OKLeftOut)
		}
		ew.printf("\n%s: %d ok, %s, %d failed%s\n", Plural(len(d.Checks)+d.OKLeftOut, "check"), count[CheckOK]+d.OKLeftOut,
			Plural(count[CheckWarn], "warning"), count[CheckFail], left)
	}
	return ew.err
}

// Wrap breaks text into lines of at most width runes at spaces; a word
// longer than width (a path) gets a line of its own.
func Wrap(text string, width int) []string { return wrapHanging(text, width, width) }

// wrapHanging is Wrap with the first line width wide and the others rest.
func wrapHanging(text string, width, rest int) []string {
	var lines []string
	var line strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		wn := len([]rune(word))
		if n > 0 && n+1+wn > width {
			lines = append(lines, line.String())
			line.Reset()
			n = 0
			width = rest
		}
		if n > 0 {
			line.WriteByte(' ')
			n++
		}
		line.WriteString(word)
		n += wn
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, line.String())
	}
	return lines
}

// OnlyNotOK leaves in d the checks that are not ok (-q), counting those
// left out; false when every check was ok and there is nothing to show.
func (d *Diagnosis) OnlyNotOK() bool {
	var notOK []Check
	for _, c := range d.Checks {
		if c.Status != CheckOK {
			notOK = append(notOK, c)
		}
	}
	d.OKLeftOut += len(d.Checks) - len(notOK)
	d.Checks = notOK
	return len(notOK) > 0
}

// Failed is doctor's exit status: an error naming the checks that failed
// (ExitError), nil when none did.
func (d *Diagnosis) Failed() error {
	var failed []string
	for _, c := range d.Checks {
		if c.Status == CheckFail {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &StatusError{Code: ExitError, Msg: fmt.Sprintf("%s failed: %s", Plural(len(failed), "check"), strings.Join(failed, ", "))}
}

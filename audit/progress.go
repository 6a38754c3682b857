package audit

import (
	"fmt"
	"io"
	"time"

	"github.com/orphanreaper/reaper/reap"
)

// Progress shows on a terminal what a reap is doing while it waits out a
// tree's grace — which can be minutes — in one line on stderr, rewritten
// in place and cleared when the tree is done; the report that follows
// says how each tree ended. It is only set up for a person watching:
// stderr a terminal, no --quiet, not a dry run.
type Progress struct {
	W      io.Writer
	active bool // a line is on the screen
}

func (p *Progress) Show(pr reap.Progress) {
	switch pr.Step {
	case "grace":
		fmt.Fprintf(p.W, "\r\x1b[Kreaper: tree %d: SIGTERM sent; %d of %s left, %s of the grace to go",
			pr.RootPID, pr.Left, Plural(pr.Total, "process"), HumanAge(pr.Remaining.Round(time.Second)))
		p.active = true
	case "done":
		if p.active {
			fmt.Fprint(p.W, "\r\x1b[K")
			p.active = false
		}
	}
}

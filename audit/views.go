package audit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/orphanreaper/reaper/ledger"
)

// Tabular is every command's output: one JSON object for scripts, a table
// for people, both from the same model.
type Tabular interface {
	WriteTable(w io.Writer, st Style) error
}

// Write writes v in format: "json", else its table drawn in st.
func Write(w io.Writer, v Tabular, format string, st Style) error {
	if format == "json" {
		return WriteJSON(w, v)
	}
	if st.ASCII {
		w = asciiWriter{w}
	}
	return v.WriteTable(w, st)
}

// asciiFold is what a table's own punctuation becomes where the locale is
// not UTF-8 (LANG=C): what a terminal there cannot draw.
var asciiFold = strings.NewReplacer("·", "-", "→", "->", "—", "--", "…", "...", "└─", "`-", "├─", "|-", "│", "|", "×", "x")

// asciiWriter writes through asciiFold. Each write is a whole line or
// more (printf calls), so no character is cut in two.
type asciiWriter struct{ w io.Writer }

func (a asciiWriter) Write(p []byte) (int, error) {
	if _, err := asciiFold.WriteString(a.w, string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// LedgerView is `reaper ledger show`: each ledger, its owner's state, and
// what each run maps to in the process table now.
type LedgerView struct {
	Ledgers       []ShownLedger `json:"ledgers"`
	SchemaVersion int           `json:"schema_version"`
	// StateDirs, when no path was named, are the agent clients' state dirs
	// found as scan finds them, each read as its owner.
	StateDirs []ShownDir `json:"state_dirs,omitempty"`
	// Discovered: no path was named; the ledgers are those found.
	Discovered bool `json:"discovered,omitempty"`
}

// ShownDir is one state dir read, and what went wrong, if anything.
type ShownDir struct {
	Client string `json:"client"`
	Path   string `json:"path"`
	UID    uint32 `json:"uid"`
	Error  string `json:"error,omitempty"`
}

// ShownLedger is one ledger of a LedgerView.
type ShownLedger struct {
	Source      string           `json:"source"`
	Owner       ledger.Owner     `json:"owner"`
	OwnerStatus string           `json:"owner_status"` // alive, gone, unknown
	OwnerDetail string           `json:"owner_detail"`
	Sessions    []ledger.Session `json:"sessions"`
	Runs        []ShownRun       `json:"runs"`
}

// ShownRun is one run and what it is now.
type ShownRun struct {
	ledger.Run
	Status  string   `json:"status"`
	Info    string   `json:"info,omitempty"`
	Detail  string   `json:"detail,omitempty"`
	Cmdline string   `json:"cmdline,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

// WriteTable writes the ledgers for a person.
func (v *LedgerView) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	if len(v.StateDirs) > 0 {
		ew.printf("state dirs read, each as its owner:\n")
		for _, d := range v.StateDirs {
			status := "read"
			if d.Error != "" {
				status = Printable(d.Error)
			}
			ew.printf("  %s %s (uid %d): %s\n", Printable(d.Client), Printable(d.Path), d.UID, status)
		}
		ew.printf("\n")
	}
	for _, l := range v.Ledgers {
		ew.printf("%s\n  owner %s pid %d: %s (%s)\n", Printable(l.Source), Printable(l.Owner.Name), l.Owner.PID, Printable(l.OwnerStatus), Printable(l.OwnerDetail))
		for _, sess := range l.Sessions {
			parent := ""
			if sess.Parent != "" {
				parent = " (parent " + Printable(sess.Parent) + ")"
			}
			ew.printf("  session %s%s: %s\n", Printable(sess.Key), parent, Printable(string(sess.State)))
		}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		if !st.NoHeaders {
			fmt.Fprintf(tw, "  RUN\tKIND\tPID\tSTATE\tSESSION\tNOW\tCOMMAND\n")
		}
		for _, r := range l.Runs {
			now := r.Status
			if r.Info != "" && r.Info != r.Status {
				now += " (" + r.Info + ")"
			}
			if len(r.Reasons) > 0 {
				now += ": " + strings.Join(r.Reasons, ", ")
			}
			command := r.Cmdline
			if command == "" {
				command = r.Detail
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\n", Printable(r.ID), Printable(string(r.Kind)), r.PID, Printable(string(r.State)), Printable(r.Session), Printable(now), clipRunes(command))
		}
		tw.Flush()
		ew.printf("\n")
	}
	switch {
	case len(v.Ledgers) == 0 && v.Discovered && len(v.StateDirs) > 0:
		ew.printf("No ledger: the state dirs above record no run, and the policy's [[owner]] entries name no ledger.\n")
	case len(v.Ledgers) == 0 && v.Discovered:
		ew.printf("No ledger found: no agent client's state dir here, and no [[owner]] ledger in the policy. Name one: reaper ledger show PATH\n")
	case len(v.Ledgers) == 0:
		ew.printf("No runs in these ledgers.\n")
	}
	return ew.err
}

// PTYView is `reaper pty`: every pseudo-terminal some process holds, who
// holds each end, and which are dead.
type PTYView struct {
	SchemaVersion int        `json:"schema_version"`
	InUse         int        `json:"in_use"`
	Max           int        `json:"max"`
	PTYs          []PTYEntry `json:"ptys"`
	Dead          []int      `json:"dead"`
	Unreadable    int        `json:"unreadable_processes"`
	// AsRoot: every process's fds were readable in principle; otherwise
	// other users' terminals are not shown.
	AsRoot bool `json:"as_root"`
}

// PTYEntry is one pseudo-terminal of a PTYView.
type PTYEntry struct {
	PTS     int         `json:"pts"`
	Dead    bool        `json:"dead"`
	Why     string      `json:"why,omitempty"`
	Masters []PTYHolder `json:"masters"`
	Slaves  []PTYHolder `json:"slaves"`
}

// PTYHolder is a process holding one end.
type PTYHolder struct {
	PID       int    `json:"pid"`
	Cmdline   string `json:"cmdline"`
	InFinding bool   `json:"in_finding"`
}

// WriteTable writes the terminals for a person.
func (v *PTYView) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	if !st.NoHeaders {
		ew.printf("PTYs: %d in use of %d (kernel.pty.nr / kernel.pty.max); %d dead\n", v.InUse, v.Max, len(v.Dead))
	}
	// One block per terminal, one holder per line, within 80 columns: the
	// state, why when it is not plainly in use, then each end's holders.
	starred := false
	holder := func(end string, h PTYHolder) {
		mark := ""
		if h.InFinding {
			mark, starred = "*", true
		}
		ew.printf("  %s\n", clipWidth(fmt.Sprintf("%-6s %d%s %s", end, h.PID, mark, Printable(h.Cmdline)), termWidth-2))
	}
	for _, e := range v.PTYs {
		state := "in use"
		if e.Dead {
			state = st.paint(sgrRed, "DEAD")
		}
		ew.printf("\n/dev/pts/%d  %s\n", e.PTS, state)
		if e.Why != "" {
			for _, line := range Wrap(Printable(e.Why), termWidth-4) {
				ew.printf("    %s\n", line)
			}
		}
		for _, h := range e.Masters {
			holder("master", h)
		}
		if len(e.Masters) == 0 {
			ew.printf("  master —\n")
		}
		for _, h := range e.Slaves {
			holder("slave", h)
		}
	}
	if len(v.PTYs) == 0 {
		ew.printf("\nNo process holds a pseudo-terminal.\n")
	}
	if starred {
		ew.printf("\n* part of a finding of the policy\n")
	}
	if !v.AsRoot {
		ew.printf("not root: other users' fds were not read; their terminals are not shown\n")
	}
	if v.Unreadable > 0 {
		what := "processes' fds"
		if v.Unreadable == 1 {
			what = "process's fds"
		}
		ew.printf("%d %s could not be read (other users'; run as root to see them)\n", v.Unreadable, what)
	}
	return ew.err
}

// clipRunes escapes control characters (a command line may hold newlines)
// and shortens s to 100 characters for a narrow table.
// clipWidth cuts s to n runes, the last an ellipsis when cut.
func clipWidth(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// clipRunes escapes s and cuts it to 100 runes and an ellipsis.
func clipRunes(s string) string { return clipWidth(Printable(s), 101) }

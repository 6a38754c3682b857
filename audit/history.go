package audit

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orphanreaper/reaper/policy"
)

// HistoryFilter selects the records `reaper history` shows. Zero fields
// select everything.
type HistoryFilter struct {
	Since, Until time.Time
	Rule         string
	User         string // a name, or a uid in decimal
	Outcome      string
	Mode         string // "reap" or "dry-run" (a top preview is one); "" both
	Signals      bool   // the signal records too, not only the decisions
}

// History is what the audit log says happened in a span of time: the
// decisions (and signals, if asked) in the order written, and their sums.
type History struct {
	SchemaVersion int        `json:"schema_version"`
	Since         *time.Time `json:"since,omitempty"` // nil: from the start of the log
	Until         *time.Time `json:"until,omitempty"` // nil: to its end
	Files         []string   `json:"files"`
	Records       []Record   `json:"records"`
	Totals        struct {
		Decisions int            `json:"decisions"`
		Outcomes  map[string]int `json:"outcomes"`
		// KilledBytes is the RSS of the trees killed, when each was found.
		KilledBytes uint64 `json:"killed_bytes"`
		Signals     int    `json:"signals"`
		// DryRuns counts the decisions of dry runs (reap --dry-run, top's
		// previews): planned, never signalled.
		DryRuns int `json:"dry_runs"`
	} `json:"totals"`
	// Skipped counts lines that were not audit records (torn, or not
	// JSON): they are not shown, and said.
	Skipped int `json:"skipped"`
}

// maxRecordLine bounds one audit line: a decision with a tree's pids and a
// command line is a few KiB; anything longer is not one of reaper's.
const maxRecordLine = 1 << 20

// LogFiles returns the audit log at path and the rotations logrotate made
// of it beside it (path.1, path.2.gz, …), oldest first; the ones missing
// are left out. The live file must exist.
func LogFiles(path string) ([]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	// The rotations are found by name in the log's dir, not by a glob of
	// path: a glob reads its metacharacters in the dir's name, and on
	// Windows it hands back `\` where the path said `/`. Each keeps the
	// path as it was spelled, its suffix added.
	entries, _ := os.ReadDir(filepath.Dir(path))
	base := filepath.Base(path) + "."
	type rotated struct {
		n    int
		path string
	}
	var old []rotated
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(rest, ".gz")); err == nil && n > 0 {
			old = append(old, rotated{n, path + "." + rest})
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].n > old[j].n })
	files := make([]string, 0, len(old)+1)
	for _, r := range old {
		files = append(files, r.path)
	}
	return append(files, path), nil
}

// ReadHistory reads the audit log files (LogFiles' order) and keeps the
// records f selects.
func ReadHistory(files []string, f HistoryFilter) (*History, error) {
	h := &History{SchemaVersion: SchemaVersion, Files: files, Records: []Record{}}
	if !f.Since.IsZero() {
		h.Since = &f.Since
	}
	if !f.Until.IsZero() {
		h.Until = &f.Until
	}
	h.Totals.Outcomes = map[string]int{}
	for _, path := range files {
		if err := h.readFile(path, f); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *History) readFile(path string, f HistoryFilter) error {
	file, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // rotated away since LogFiles
			return nil
		}
		return err
	}
	defer file.Close()
	var r io.Reader = file
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(file)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRecordLine)
	for sc.Scan() {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Event == "" || rec.Time.IsZero() {
			h.Skipped++
			continue
		}
		if f.keeps(&rec) {
			h.add(rec)
		}
	}
	if err := sc.Err(); err != nil {
		// A line past the bound, or a torn gzip stream: what came before
		// it is kept, and the rest of this file is said to be skipped.
		h.Skipped++
	}
	return nil
}

func (f HistoryFilter) keeps(r *Record) bool {
	switch {
	case !f.Since.IsZero() && r.Time.Before(f.Since),
		!f.Until.IsZero() && !r.Time.Before(f.Until):
		return false
	case r.Event == "signal":
		return f.Signals && f.Rule == "" && f.User == "" && f.Outcome == ""
	case r.Event != "decision":
		return false
	case f.Rule != "" && r.Rule != f.Rule,
		f.Outcome != "" && string(r.Outcome) != f.Outcome,
		f.Mode != "" && recordMode(r) != f.Mode:
		return false
	case f.User != "":
		return r.User == f.User || r.UID != nil && strconv.FormatInt(*r.UID, 10) == f.User
	}
	return true
}

func (h *History) add(r Record) {
	h.Records = append(h.Records, r)
	if r.Event == "signal" {
		h.Totals.Signals++
		return
	}
	h.Totals.Decisions++
	h.Totals.Outcomes[string(r.Outcome)]++
	if recordMode(&r) == "dry-run" {
		h.Totals.DryRuns++
	}
	if r.Outcome == policy.Killed {
		h.Totals.KilledBytes += r.RSSBytes
	}
}

// WriteTable writes the history for a person: a line per record, then
// the sums; with st.NoHeaders, the lines only.
func (h *History) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	const stamp = "2006-01-02 15:04:05 MST"
	span := "from the start of the log"
	if h.Since != nil {
		span = "since " + h.Since.Local().Format(stamp)
	}
	if h.Until != nil {
		span += ", until " + h.Until.Local().Format(stamp)
	}
	switch {
	case len(h.Records) == 0 && !st.NoHeaders:
		ew.printf("Nothing recorded %s.\n", span)
	case len(h.Records) > 0:
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		if !st.NoHeaders {
			// Painted like the cells below it: the same bytes more.
			fmt.Fprintf(tw, "TIME\tMODE\t%s\tRULE\tUSER\tPID\tRSS\tCOMMAND\n", st.paint(sgrPlain, "OUTCOME"))
		}
		for _, r := range h.Records {
			when := r.Time.Local().Format("2006-01-02 15:04:05")
			if r.Event == "signal" {
				what := r.Signal + " to " + strconv.Itoa(r.PID)
				if r.Via != "" {
					what += " by " + r.Via
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t%d\t\t%s: %s\n", when, Printable(recordMode(&r)), st.paint(sgrPlain, "signal"), r.RootPID, Printable(what), Printable(r.Result))
				continue
			}
			user := r.User
			if user == "" && r.UID != nil && *r.UID >= 0 {
				user = strconv.FormatInt(*r.UID, 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", when, Printable(recordMode(&r)), st.paint(outcomeColor(r.Outcome, false), Printable(string(r.Outcome))), Printable(r.Rule), Printable(user), r.RootPID,
				HumanBytes(r.RSSBytes), clip(Printable(r.Cmdline)))
		}
		if err := tw.Flush(); err != nil && ew.err == nil {
			ew.err = err
		}
	}
	var parts []string
	for _, o := range policy.Outcomes {
		if n := h.Totals.Outcomes[string(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, o))
		}
	}
	sum := Plural(h.Totals.Decisions, "decision")
	if len(parts) > 0 {
		sum += ": " + strings.Join(parts, ", ")
	}
	if h.Totals.KilledBytes > 0 {
		sum += " · " + HumanBytes(h.Totals.KilledBytes) + " in the trees killed"
	}
	if n := h.Totals.DryRuns; n > 0 {
		sum += fmt.Sprintf(" · %d of them dry runs (top's previews are too), which signalled nothing", n)
	}
	if h.Totals.Signals > 0 {
		sum += " · " + Plural(h.Totals.Signals, "signal")
	}
	if len(h.Records) > 0 && !st.NoHeaders {
		ew.printf("\n%s, %s.\n", sum, span)
	}
	if h.Skipped > 0 && !st.NoHeaders {
		ew.printf("%s.\n", h.SkippedNote())
	}
	return ew.err
}

// SkippedNote says how many lines of the log were not records; a table
// without headers leaves it to the caller (stderr), to keep its rows only.
func (h *History) SkippedNote() string {
	if h.Skipped == 1 {
		return "1 line of the audit log was not a record: skipped"
	}
	return fmt.Sprintf("%d lines of the audit log were not records: skipped", h.Skipped)
}

// recordMode is the mode a record was written in: "reap" where the
// record says none (the signal records, older logs).
func recordMode(r *Record) string {
	if r.Mode == "" {
		return "reap"
	}
	return r.Mode
}

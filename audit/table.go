package audit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orphanreaper/reaper/policy"
)

// maxCommand is how much of a command line the table shows.
const maxCommand = 160

// WriteTable writes r for a person: a tree per finding with pid, age, RSS,
// command and reasons, then the totals (not with st.NoHeaders). It needs
// nothing but the report.
func (r *Report) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	if st.NoHeaders {
		return r.writeRows(ew)
	}
	if !st.NoHeaders {
		// Two lines, always: the run, then its policy — the same shape
		// whatever the path's length or the count's digits.
		ew.printf("reaper %s · %s · %s\npolicy: %s\n", Printable(r.Mode), r.Time.Format("2006-01-02 15:04:05 MST"),
			Plural(r.Processes, "process"), Printable(r.Policy))
	}
	if len(r.Findings) == 0 && !st.NoHeaders {
		ew.printf("\nNo orphaned trees found.\n")
	}
	for i := range r.Findings {
		r.writeFinding(ew, &r.Findings[i], st)
	}
	if len(r.ZombieGroups) > 0 {
		ew.printf("\nZombies by parent (only the parent can clear them; never signalled):\n")
		for _, z := range r.ZombieGroups {
			who := clip(Printable(z.ParentCmdline))
			switch {
			case z.Init:
				who += " — PID 1 is not reaping"
			case z.ParentIsOwner:
				who += " — a live owner"
			case z.ParentCmdline == "":
				who = "(not visible)"
			}
			ew.printf("  %s under %d, oldest %s: %s\n", Plural(z.Count, "zombie"), z.ParentPID,
				HumanAge(time.Duration(z.OldestAgeSecond)*time.Second), who)
			if z.ProcessLimit > 0 {
				ew.printf("    its user has %d processes, zombies included, of a limit of %d (RLIMIT_NPROC): at it, fork fails\n", z.UserProcesses, z.ProcessLimit)
			}
			if z.PIDsMax > 0 {
				ew.printf("    its cgroup %s holds %d tasks, zombies and threads included, of pids.max %d: at it, fork fails\n", Printable(z.PIDsCgroup), z.PIDsCurrent, z.PIDsMax)
			}
		}
	}
	if len(r.UnmatchedTrees) > 0 {
		ew.printf("\nReparented trees no rule matched (--all):\n")
		for _, u := range r.UnmatchedTrees {
			ew.printf("  %d · %s · %s · %s\n    %s\n    why not: %s\n", u.RootPID, Printable(u.Kind), Printable(strings.Join(u.Reasons, ", ")),
				HumanBytes(u.RSSBytes), clip(Printable(u.Cmdline)), Printable(u.WhyNot))
		}
	}
	if len(r.Advice) > 0 {
		ew.printf("\nAdvice:\n")
		for _, a := range r.Advice {
			ew.printf("  [%s] %s: %s\n    setting: %s\n", Printable(a.Severity), Printable(a.ID), clipText(Printable(a.Evidence)), Printable(a.Setting))
		}
	}
	for _, d := range r.PTY.Dead {
		ew.printf("\n%s /dev/pts/%d: %s (slave held by %s; master held by %s)", st.paint(sgrRed, "dead PTY"), d.PTS, Printable(d.Why), pidList(d.Slaves), pidList(d.Masters))
	}
	if len(r.PTY.Dead) > 0 {
		ew.printf("\n")
	}
	if len(r.Ledger) > 0 {
		ew.printf("\nLedger runs:\n")
		for _, e := range r.Ledger {
			info := ""
			if e.Info != "" && e.Info != e.Status {
				info = " (" + e.Info + ")"
			}
			ew.printf("  %s  run %s  pid %d  %s%s\n", Printable(e.Ledger), Printable(e.RunID), e.PID, Printable(e.Status), Printable(info))
		}
	}
	if len(r.Errors) > 0 {
		ew.printf("\n%s (nothing is signalled on the evidence of what could not be read):\n", st.paint(sgrRed, "Errors"))
		for _, e := range r.Errors {
			ew.printf("  %s\n", clipText(Printable(e)))
		}
	}
	if len(r.Unknown) > 0 {
		ew.printf("\n%d processes have a parent this scan cannot see (hidepid or another PID namespace); none is treated as an orphan.\n", len(r.Unknown))
	}
	for _, msg := range r.Warnings {
		ew.printf("\n%s %s", st.paint(sgrYellow, "warning:"), clipText(Printable(msg)))
	}
	if len(r.Warnings) > 0 {
		ew.printf("\n")
	}
	summary := []string{Plural(r.Totals.Findings, "finding"), Plural(r.Totals.Processes, "process"),
		HumanBytes(r.Totals.ReclaimableBytes) + " reclaimable", Plural(len(r.Zombies), "zombie"), r.ptyLine()}
	if n := r.Totals.Unmatched; n > 0 && len(r.UnmatchedTrees) == 0 {
		summary = append(summary, fmt.Sprintf("%s no rule matched (--all lists them)", Plural(n, "reparented tree")))
	}
	if n := r.Totals.OutOfScope; n > 0 {
		summary = append(summary, fmt.Sprintf("%s of other users not looked at (a user's reaper acts on its own; root's sees all)", Plural(n, "orphaned tree")))
	}
	if !st.NoHeaders {
		ew.printf("\n%s\n", joinWrapped(termWidth, summary...))
		if r.Mode == "scan" && len(r.Findings) > 0 {
			// The next step, where a person reads the report.
			ew.printf("next: 'reaper explain PID' tells one tree's story; 'reaper reap --dry-run' shows what a reap would do now\n")
		}
	}
	return ew.err
}

// writeRows is the report as --no-headers gives it: one row per finding,
// tab-separated — rule, kind, action, outcome (deferred where not yet
// due), root pid, user, RSS in bytes, command — for awk and cut.
func (r *Report) writeRows(ew *errWriter) error {
	for i := range r.Findings {
		f := &r.Findings[i]
		outcome := f.Outcome
		if f.Deferred {
			outcome = policy.Deferred
		}
		user := f.User
		if user == "" {
			user = fmt.Sprint(f.UID)
		}
		ew.printf("%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", Printable(f.Rule), Printable(f.Kind), Printable(f.Action), Printable(string(outcome)),
			f.RootPID, Printable(user), f.RSSBytes, strings.ReplaceAll(clip(Printable(f.Cmdline)), "\t", " "))
	}
	return ew.err
}

func (r *Report) writeFinding(ew *errWriter, f *Finding, st Style) {
	ew.printf("\n%s · %s · %s\n", st.paint(sgrBold, Printable(f.Rule)), Printable(f.Kind), actionWords(f, st))
	if f.Detail != "" {
		ew.printf("  %s\n", clipText(Printable(f.Detail)))
	}
	ew.printf("  reasons: %s\n", Printable(strings.Join(f.Reasons, ", ")))
	if f.PSSBytes > 0 {
		ew.printf("  memory: its exit frees about %s (PSS; the members' RSS below adds up to %s)\n", HumanBytes(f.PSSBytes), HumanBytes(f.RSSBytes))
	}
	for _, e := range f.Evidence {
		ew.printf("    - %s\n", clipText(Printable(e)))
	}
	if f.Owner != "" {
		owner := f.Owner
		if f.OwnerPID > 0 {
			owner += " (pid " + strconv.Itoa(f.OwnerPID) + ")"
		}
		if f.RunID != "" {
			owner += ", run " + f.RunID
		}
		ew.printf("  owner: %s\n", clipText(Printable(owner)))
	}
	// One line per terminal and role, with every pid that holds it.
	type hold struct {
		pts    int
		role   string
		hungUp bool
	}
	var holds []hold
	pids := map[hold][]string{}
	for _, p := range f.PTYs {
		h := hold{p.PTS, p.Role, p.HungUp}
		if pids[h] == nil {
			holds = append(holds, h)
		}
		pids[h] = append(pids[h], strconv.Itoa(p.PID))
	}
	for _, h := range holds {
		state := ""
		if h.hungUp {
			state = ", its master closed"
		}
		who := "pid " + pids[h][0]
		if len(pids[h]) > 1 {
			who = "pids " + strings.Join(pids[h], ", ")
		}
		ew.printf("  holds /dev/pts/%d (%s, %s%s)\n", h.pts, Printable(h.role), who, state)
	}
	if a := f.Activity; a != nil {
		verdict := "no sign of it"
		if a.ActiveAfterDone {
			verdict = "yes: " + strings.Join(a.Evidence, "; ")
		}
		ew.printf("  kept working after its run ended (%s)? %s\n", a.EndedAt.Format("2006-01-02 15:04:05 MST"), Printable(verdict))
	}
	glyphs := unicodeGlyphs
	if st.ASCII {
		glyphs = asciiGlyphs
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !st.NoHeaders {
		fmt.Fprintf(tw, "  PID\tUSER\tAGE\tRSS\t  COMMAND\n")
	}
	last := lastSiblings(f.Members)
	var open []bool // per depth: is there a later sibling, so a │ continues
	for i, m := range f.Members {
		prefix := ""
		if m.Depth > 0 {
			for len(open) < m.Depth {
				open = append(open, false)
			}
			open = open[:m.Depth]
			for d := 1; d < m.Depth; d++ {
				if open[d] {
					prefix += glyphs.pipe
				} else {
					prefix += "   "
				}
			}
			if last[i] {
				prefix += glyphs.last
			} else {
				prefix += glyphs.branch
			}
			open = append(open[:m.Depth], !last[i])
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t  %s%s\n", m.PID, userColumn(m), HumanAge(time.Duration(m.AgeSeconds)*time.Second),
			HumanBytes(m.RSSBytes), prefix, clip(Printable(m.Cmdline)))
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
}

// pidList is pids as a person reads them: "pids 3, 4", "pid 3", "no process".
func pidList(pids []int) string {
	switch len(pids) {
	case 0:
		return "no process"
	case 1:
		return "pid " + strconv.Itoa(pids[0])
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return "pids " + strings.Join(s, ", ")
}

// userColumn is a member's user as the table shows it: the name, else the
// uid (a fixture's, or one this host has no name for), else "?".
func userColumn(m Member) string {
	switch {
	case m.User != "":
		return clipUser(Printable(m.User))
	case m.UID >= 0:
		return strconv.FormatInt(m.UID, 10)
	}
	return "?"
}

// clipUser keeps a long user name from pushing the command off the line,
// as ps(1) does: its first 7 characters and a "+".
func clipUser(name string) string {
	if r := []rune(name); len(r) > 8 {
		return string(r[:7]) + "+"
	}
	return name
}

// lastSiblings reports, for each member of a pre-order walk, whether it is
// the last child of its parent: no later member at the same depth comes
// before one shallower.
func lastSiblings(ms []Member) []bool {
	last := make([]bool, len(ms))
	seen := map[int]bool{}
	for i := len(ms) - 1; i >= 0; i-- {
		d := ms[i].Depth
		last[i] = !seen[d]
		seen[d] = true
		for k := range seen {
			if k > d {
				delete(seen, k)
			}
		}
	}
	return last
}

// joinWrapped joins parts with " · ", starting a new line where the next
// part would pass width columns: the header and summary of a report fit
// an 80-column terminal without the terminal breaking words.
func joinWrapped(width int, parts ...string) string {
	var b strings.Builder
	n := 0
	for i, p := range parts {
		pn := len([]rune(p))
		switch {
		case i == 0:
		case n+3+pn > width:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" · ")
			n += 3
		}
		b.WriteString(p)
		n += pn
	}
	return b.String()
}

func (r *Report) ptyLine() string {
	if r.PTY.Max == 0 {
		return "PTYs unknown"
	}
	// The dead here are those of the findings' terminals: scan reads the
	// fds of findings alone; 'reaper pty' reads every process's, and
	// counts every dead terminal on the host.
	return fmt.Sprintf("PTYs %d/%d in use, %d held by findings, %d of those dead ('reaper pty' checks them all)", r.PTY.InUse, r.PTY.Max, r.PTY.HeldByFindings, len(r.PTY.Dead))
}

func clip(s string) string { return clipAt(s, maxCommand) }

func utf8Start(b byte) bool { return b&0xc0 != 0x80 }

// maxText is how much of one line of evidence, a detail, an error or a
// warning the table and --quiet show: each is reaper's words around what a
// user's files and processes said (a path is at most 4 KiB), and the JSON
// report has them whole.
const maxText = 4 << 10

// clipText cuts s to maxText bytes, at a character, marking the cut.
func clipText(s string) string { return clipAt(s, maxText) }

// clipAt cuts s to n bytes, at a character, marking the cut.
func clipAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Plural is n with word, in the plural unless n is 1 ("1 process", "2
// processes").
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "s") {
		return strconv.Itoa(n) + " " + word + "es"
	}
	if stem, ok := strings.CutSuffix(word, "y"); ok && !strings.ContainsAny(stem[max(len(stem)-1, 0):], "aeiou") {
		return strconv.Itoa(n) + " " + stem + "ies" // copies, not keys' "keies"
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// HumanAge formats an age the way ps's etime reads, but shorter.
func HumanAge(d time.Duration) string {
	d = d.Truncate(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// HumanBytes formats a size in binary units.
func HumanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// errWriter keeps the first write error, so the table code reads straight.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// treeGlyphs draw a finding's tree: box-drawing characters, or ASCII where
// the terminal's locale is not UTF-8 (Style.ASCII).
type treeGlyphs struct{ pipe, last, branch string }

var (
	unicodeGlyphs = treeGlyphs{"│  ", "└─ ", "├─ "}
	asciiGlyphs   = treeGlyphs{"|  ", "`- ", "|- "}
)

// actionWords is a finding's rule's action and what came of it: "terminate
// → killed", "report → reported" — and, where a scan only reports what a
// rule would do, "would terminate" rather than "terminate → reported".
func actionWords(f *Finding, st Style) string {
	if f.Outcome == policy.Reported && f.Action != "report" && f.Action != "" {
		return st.paint(outcomeColor(f.Outcome, f.Deferred), "would "+Printable(f.Action))
	}
	return Printable(f.Action) + " → " + st.paint(outcomeColor(f.Outcome, f.Deferred), Printable(outcomeWords(f)))
}

// outcomeWords says what happened to a finding's tree in an operator's
// words: how a killed tree ended, and a refusal by design as deferred.
func outcomeWords(f *Finding) string {
	switch {
	case f.Deferred:
		return string(policy.Deferred)
	case f.Outcome != policy.Killed:
		return string(f.Outcome)
	case f.Ended == "SIGTERM":
		return "killed by SIGTERM" // history's word first: it records "killed"
	case f.Ended == "SIGKILL":
		return "killed by SIGKILL after the grace"
	case f.Ended != "":
		return "killed by " + f.Ended // a unit's call (cgroup.kill, TerminateJobObject), or Windows' TerminateProcess
	}
	return string(policy.Killed)
}

// WriteQuiet is the report as --quiet shows it: one line for each finding
// something was done to or that needs a look — killed, gone, failed, or
// refused — and one for each error; nothing at all when there is none, so
// a timer's journal gets a line only when the run did or could not do
// something. What was only reported is in the audit log, the metrics and
// `reaper scan`.
func (r *Report) WriteQuiet(w io.Writer) error { return r.WriteQuietAs(w, Printable(r.Mode)) }

// WriteQuietAs is WriteQuiet with who, after "reaper ", naming what
// speaks: "run", or a watch's pass with its time ("watch 10:04:05").
func (r *Report) WriteQuietAs(w io.Writer, who string) error {
	var b strings.Builder
	for _, f := range r.Findings {
		if f.Outcome == policy.Reported || f.Outcome == policy.Planned && r.Mode != "dry-run" || f.Outcome == policy.Protected || f.Deferred {
			continue // nothing done, nothing to look at: the operator's [[protect]] is a decision
		}
		words := outcomeWords(&f)
		if f.Outcome == policy.Planned {
			words = "would " + f.Action // a quiet dry-run still says its plan
		}
		// One line each, which a journal takes as one entry: every word
		// of a user's (the command, a detail naming their file) escaped,
		// so that none can start a line of its own.
		fmt.Fprintf(&b, "reaper %s: tree %d %s (%s, rule %s, %s, %s): %s", who, f.RootPID, Printable(words), Printable(f.Kind), Printable(f.Rule),
			Plural(len(f.PIDs), "process"), HumanBytes(f.RSSBytes), clip(Printable(f.Cmdline)))
		if f.Detail != "" {
			fmt.Fprintf(&b, " — %s", clipText(Printable(f.Detail)))
		}
		b.WriteByte('\n')
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "reaper %s: error: %s\n", who, clipText(Printable(e)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

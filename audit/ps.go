package audit

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// PSView is `reaper ps`: every agent session on the machine with its
// tree, then the orphans (the findings no live session holds), then the
// totals per client and for the machine.
type PSView struct {
	SchemaVersion int `json:"schema_version"`
	// Processes is how many the table held; AsRoot says whether every
	// user's sessions are shown (else the reaper's own user's).
	Processes int  `json:"processes"`
	AsRoot    bool `json:"as_root"`
	// Memory says what the memory figures are: PSS where it could be read
	// ("pss"), else RSS, per process.
	Memory   string      `json:"memory"`
	Sessions []PSSession `json:"sessions"`
	Orphans  []PSOrphan  `json:"orphans"`
	// Copies are the servers several live sessions each run a copy
	// of: waste to see, never a finding. Their JSON name is the
	// CLI contract's (ps's "duplicates", which scripts read); in the code, the table and
	// the metrics they are copies.
	Copies []ServerCopies `json:"duplicates"`
	// Headroom is each user's process count against their limits.
	Headroom []Headroom `json:"headroom"`
	Clients  []PSTotal  `json:"clients"`
	Total    PSTotal    `json:"total"`
	Warnings []string   `json:"warnings"`
}

// PSSession is one session: a live client process with its tree, or an
// ended one its record names (its leftovers are among the orphans).
type PSSession struct {
	// Client is the client's name (claude-code), Title as people call it.
	Client  string `json:"client"`
	Title   string `json:"title"`
	Version string `json:"version,omitempty"`
	PID     int    `json:"pid"`
	UID     int64  `json:"uid"`
	User    string `json:"user"`
	// SessionID, Dir and Kind are what the client's record says, Record
	// which record that is and Speaker whose word it is; empty where the
	// session is known by its process alone.
	SessionID string `json:"session_id,omitempty"`
	Dir       string `json:"dir,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Record    string `json:"record,omitempty"`
	Speaker   int64  `json:"speaker"`
	// State is live (in its terminal's foreground), background (on a
	// terminal, not in its foreground, or a background agent's job by its
	// record), headless (no terminal) or ended (the record's process is
	// gone).
	State string `json:"state"`
	// AgeSeconds is how long the session's process has run; for an ended
	// session, how long ago it started, when its record says (StartedAt,
	// RFC 3339), else 0.
	AgeSeconds  int64       `json:"age_seconds"`
	StartedAt   string      `json:"started_at,omitempty"`
	MemoryBytes uint64      `json:"memory_bytes"`
	CPUSeconds  float64     `json:"cpu_seconds"`
	Processes   []PSProcess `json:"processes"`
	// Leaks counts the findings inside the tree (a superseded server, an
	// abandoned job), Leftovers the orphans an ended session left.
	Leaks     int   `json:"leaks"`
	Leftovers []int `json:"leftovers,omitempty"`
}

// PSProcess is one process of a session's tree or an orphan's.
type PSProcess struct {
	PID         int     `json:"pid"`
	PPID        int     `json:"ppid"`
	Depth       int     `json:"depth"`
	Kind        string  `json:"kind"`
	Name        string  `json:"name,omitempty"` // a declared MCP server's name
	State       string  `json:"state"`          // the kernel's: R, S, D, Z, T …
	AgeSeconds  int64   `json:"age_seconds"`
	MemoryBytes uint64  `json:"memory_bytes"`
	PSS         bool    `json:"pss"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	Cmdline     string  `json:"cmdline"`
	// Leak, on the root of a finding inside a live session, is its
	// reasons (superseded, abandoned …).
	Leak []string `json:"leak,omitempty"`
}

// PSOrphan is one finding no live session holds.
type PSOrphan struct {
	RootPID   int      `json:"root_pid"`
	Kind      string   `json:"kind"`
	Reasons   []string `json:"reasons"`
	Owner     string   `json:"owner"`
	Client    string   `json:"client"`
	SessionID string   `json:"session_id,omitempty"`
	Rule      string   `json:"rule"`
	Action    string   `json:"action"`
	// Protected says why the tree is never signalled, whatever its rule
	// says: a [[protect]] entry, or a process's own REAPER_KEEP=1.
	Protected   string      `json:"protected,omitempty"`
	UID         int64       `json:"uid"`
	User        string      `json:"user"`
	MemoryBytes uint64      `json:"memory_bytes"`
	Processes   []PSProcess `json:"processes"`
}

// ServerCopies is one server several live sessions each run a copy of:
// the same command line (the server's own, below any launcher of the
// client's) of the same user. Clients that start every configured server
// once per session (Claude Code does, by design) run N sessions × M
// servers; a server that speaks HTTP, or one put behind a bridge, runs
// once for them all.
type ServerCopies struct {
	Command string `json:"command"`
	// Name is the server's name as its client's config calls it, where a
	// config declares it.
	Name    string   `json:"name,omitempty"`
	Clients []string `json:"clients"`
	UID     int64    `json:"uid"`
	User    string   `json:"user"`
	Copies  int      `json:"copies"`
	// Sessions are the pids of the sessions' processes, PIDs the copies'.
	Sessions []int `json:"sessions"`
	PIDs     []int `json:"pids"`
	// MemoryBytes is what the copies hold together, each with what it
	// runs.
	MemoryBytes uint64 `json:"memory_bytes"`
	Advice      string `json:"advice"`
}

// PSTotal sums sessions, processes and memory, for a client or the
// machine; orphans are counted by the client that left them.
type PSTotal struct {
	Client        string `json:"client,omitempty"`
	Sessions      int    `json:"sessions"`
	Processes     int    `json:"processes"`
	MemoryBytes   uint64 `json:"memory_bytes"`
	Orphans       int    `json:"orphans"`
	OrphanBytes   uint64 `json:"orphan_bytes"`
	OrphanProcess int    `json:"orphan_processes"`
}

// PSOrder names the orders ps and top sort sessions in.
var PSOrder = []string{"memory", "cpu", "age"}

// Sort orders the sessions and orphans by key (memory, cpu or age), the
// largest first; ties by pid.
func (v *PSView) Sort(key string) {
	less := func(am, bm uint64, ac, bc float64, aa, ba int64, ap, bp int) bool {
		switch {
		case key == "cpu" && ac != bc:
			return ac > bc
		case key == "age" && aa != ba:
			return aa > ba
		case key == "memory" && am != bm:
			return am > bm
		}
		return ap < bp
	}
	sort.SliceStable(v.Sessions, func(i, j int) bool {
		a, b := v.Sessions[i], v.Sessions[j]
		return less(a.MemoryBytes, b.MemoryBytes, a.CPUSeconds, b.CPUSeconds, a.AgeSeconds, b.AgeSeconds, a.PID, b.PID)
	})
	cpu := func(o PSOrphan) (c float64) {
		for _, p := range o.Processes {
			c += p.CPUSeconds
		}
		return c
	}
	age := func(o PSOrphan) int64 {
		if len(o.Processes) == 0 {
			return 0
		}
		return o.Processes[0].AgeSeconds
	}
	sort.SliceStable(v.Orphans, func(i, j int) bool {
		a, b := v.Orphans[i], v.Orphans[j]
		return less(a.MemoryBytes, b.MemoryBytes, cpu(a), cpu(b), age(a), age(b), a.RootPID, b.RootPID)
	})
}

// WriteTable writes the sessions for a person, within 80 columns: a line
// per session, its tree below it, then the orphans and the totals.
func (v *PSView) WriteTable(w io.Writer, st Style) error {
	ew := &errWriter{w: w}
	scope := "your sessions"
	if v.AsRoot {
		scope = "every user's sessions"
	}
	if !st.NoHeaders {
		ew.printf("%s; %d processes here; memory: %s\n", scope, v.Processes, memoryWords(v.Memory))
	}
	for _, s := range v.Sessions {
		ew.printf("\n%s\n", clipWidth(sessionLine(s, st), st.cols(termWidth+40)))
		if s.Record != "" {
			ew.printf("  %s\n", clipWidth(Term(recordLine(s), maxText), st.cols(termWidth)-2))
		}
		for _, p := range s.Processes {
			ew.printf("%s\n", processLine(p, st))
		}
		if len(s.Leftovers) > 0 {
			ew.printf("  left %s, below: %s\n", Plural(len(s.Leftovers), "tree"), joinPIDs(s.Leftovers))
		}
	}
	if len(v.Sessions) == 0 {
		ew.printf("\nNo agent session is running%s.\n", map[bool]string{true: "", false: " as this user"}[v.AsRoot])
	}
	if len(v.Orphans) > 0 {
		ew.printf("\norphans (the findings: no live session holds them)\n")
		for _, o := range v.Orphans {
			whose := Term(o.Owner, maxText)
			if whose == "" {
				whose = "no owner known"
			}
			if o.SessionID != "" {
				whose += " session " + Term(o.SessionID, MaxName)
			}
			rule := RuleText(o)
			// What will happen to it first: ps is where a person looks
			// for that, and a long list of reasons must not cut it off.
			ew.printf("%s\n", clipWidth(fmt.Sprintf("  tree %d, %s: %s; %s; %s", o.RootPID, HumanBytes(o.MemoryBytes),
				rule, Term(strings.Join(o.Reasons, ", "), maxText), whose), st.cols(termWidth+20)))
			for _, p := range o.Processes {
				ew.printf("%s\n", processLine(p, st))
			}
		}
	}
	if len(v.Copies) > 0 {
		ew.printf("\ncopies across live sessions (each session started its own; never a finding)\n")
		for _, d := range v.Copies {
			ew.printf("%s\n", clipWidth("  "+CopiesLine(d), st.cols(termWidth+20)))
			ew.printf("%s\n", clipWidth("    "+Term(d.Command, MaxCmdline), st.cols(termWidth)))
			ew.printf("%s\n", clipWidth("    "+Term(d.Advice, maxText), st.cols(termWidth+40)))
		}
	}
	ew.printf("\n")
	for _, c := range v.Clients {
		ew.printf("%s\n", totalLine(c.Client, c))
	}
	ew.printf("%s\n", totalLine("total", v.Total))
	for _, warning := range v.Warnings {
		ew.printf("warning: %s\n", Term(warning, maxText))
	}
	return ew.err
}

// CopiesLine says how many copies of a server run, under how many
// sessions, and what they hold.
func CopiesLine(d ServerCopies) string {
	what := "a server"
	if d.Name != "" {
		what = fmt.Sprintf("server %q", Term(d.Name, MaxName))
	}
	line := fmt.Sprintf("%s: %s under %s, %s together, pids %s", what, Plural(d.Copies, "copy"), Plural(len(d.Sessions), "session"),
		HumanBytes(d.MemoryBytes), joinPIDs(d.PIDs))
	if d.User != "" {
		line += "  " + Term(d.User, maxText)
	}
	return line
}

func memoryWords(m string) string {
	if m == "pss" {
		return "PSS where readable, else RSS"
	}
	return "RSS (no PSS was readable)"
}

// sessionLine is a session's head line: client, pid, state, memory, CPU,
// age, and its id and dir.
func sessionLine(s PSSession, st Style) string {
	name := Term(s.Title, MaxName)
	if s.Version != "" {
		name += " " + Term(s.Version, MaxName)
	}
	state := s.State
	switch state {
	case "ended":
		state = st.paint(sgrRed, state)
	case "live":
		state = st.paint(sgrGreen, state)
	}
	line := fmt.Sprintf("%s  pid %d  %s  %s  cpu %s  up %s", name, s.PID, state, HumanBytes(s.MemoryBytes),
		cpuText(s.CPUSeconds), HumanAge(time.Duration(s.AgeSeconds)*time.Second))
	if s.State == "ended" {
		// Its process is gone: what is left is its leftovers' memory, and
		// its start only when its record says.
		line = fmt.Sprintf("%s  pid %d  %s  %s left behind  %s", name, s.PID, state, HumanBytes(s.MemoryBytes), s.Started())
	}
	if s.User != "" {
		line += "  " + Term(s.User, maxText)
	}
	if s.Leaks > 0 {
		line += "  " + st.paint(sgrYellow, Plural(s.Leaks, "leak"))
	}
	return line
}

// Started says when an ended session started, as its record says.
func (s *PSSession) Started() string {
	if s.StartedAt == "" {
		return "its start not recorded"
	}
	return "started " + HumanAge(time.Duration(s.AgeSeconds)*time.Second) + " ago"
}

// recordLine says which record names the session, and whose word it is.
func recordLine(s PSSession) string {
	var parts []string
	if s.SessionID != "" {
		parts = append(parts, "session "+s.SessionID)
	}
	if s.Dir != "" {
		parts = append(parts, "in "+s.Dir)
	}
	if s.Kind != "" {
		parts = append(parts, s.Kind)
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%s, uid %d's word)", s.Record, s.Speaker)
}

// processLine is one process of a tree, indented by its depth.
func processLine(p PSProcess, st Style) string {
	what := Term(p.Kind, maxText)
	if p.Name != "" {
		what += " " + Term(p.Name, MaxName)
	}
	leak := ""
	if len(p.Leak) > 0 {
		leak = " " + st.paint(sgrYellow, "LEAK "+Term(strings.Join(p.Leak, ","), maxText))
	}
	state := ""
	if p.State != "S" && p.State != "R" && p.State != "I" {
		state = " [" + Term(p.State, maxText) + "]"
	}
	head := fmt.Sprintf("  %s%-7d %-5s %8s%s%s ", strings.Repeat("  ", min(p.Depth, 8)), p.PID, what, HumanBytes(p.MemoryBytes), state, leak)
	return head + clipWidth(Term(p.Cmdline, MaxCmdline), max(st.cols(termWidth)-len([]rune(head)), 20))
}

func totalLine(name string, t PSTotal) string {
	line := fmt.Sprintf("%-14s %s, %s, %s", Term(name, maxText), Plural(t.Sessions, "session"), Plural(t.Processes, "process"), HumanBytes(t.MemoryBytes))
	if t.Orphans > 0 {
		line += fmt.Sprintf("; %s (%s) %s", Plural(t.Orphans, "orphaned tree"), Plural(t.OrphanProcess, "process"), HumanBytes(t.OrphanBytes))
	}
	return line
}

func cpuText(sec float64) string {
	if sec < 60 {
		return fmt.Sprintf("%.1fs", sec)
	}
	return HumanAge(time.Duration(sec * float64(time.Second)))
}

func joinPIDs(pids []int) string {
	parts := make([]string, len(pids))
	for i, p := range pids {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ", ")
}

// cols is the width a view cuts its lines at: the terminal's, where
// stdout is one whose width is known, else the view's own.
func (st Style) cols(own int) int {
	w := own
	if st.Width > 0 {
		w = st.Width
	}
	if st.ASCII && w < Uncut {
		w -= 2 // a cut line's "…" is written "..." there (asciiFold)
	}
	return w
}

// RuleText is what ps and top say an orphan's rule does: "no rule", the
// rule and its action, and why it is protected where it is.
func RuleText(o PSOrphan) string {
	switch {
	case o.Rule == "":
		return "no rule"
	case o.Protected != "":
		return Term(o.Rule, maxText) + " → " + Term(o.Action, maxText) + ", protected: " + Term(o.Protected, maxText)
	}
	return Term(o.Rule, maxText) + " → " + Term(o.Action, maxText)
}

package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// SchemaVersion is the version of the JSON report. Fields are only ever
// added; a change that removes or renames one would bump it.
const SchemaVersion = 1

// Report is the result of one run, as printed with --output json.
type Report struct {
	SchemaVersion int           `json:"schema_version"`
	Mode          string        `json:"mode"`
	Processes     int           `json:"processes"`
	Findings      []Finding     `json:"findings"`
	Ledger        []LedgerEntry `json:"ledger"`
	Zombies       []Zombie      `json:"zombies"`
	PTY           PTY           `json:"pty"`
	Errors        []string      `json:"errors"`

	// Added to the report's first shape (schema version 1 still).
	Time     time.Time      `json:"time"`
	BootID   string         `json:"boot_id"`
	Policy   string         `json:"policy"`
	Unknown  []UnknownEntry `json:"unknown"`
	Totals   Totals         `json:"totals"`
	Warnings []string       `json:"warnings"`
	// ZombieGroups are the zombies by parent; a group under PID 1 (Init)
	// means an init that does not reap.
	ZombieGroups []ZombieGroupEntry `json:"zombie_groups"`
	// Advice is configuration the operator should change, with the
	// evidence and the exact setting.
	Advice []scan.Advice `json:"advice"`
	// UnmatchedTrees are the trees no rule matched, with why (scan --all).
	UnmatchedTrees []UnmatchedTree `json:"unmatched_trees,omitempty"`
}

// UnmatchedTree is a finding no rule matched: what it is, and what kept
// each rule from it.
type UnmatchedTree struct {
	RootPID    int      `json:"root_pid"`
	PIDs       []int    `json:"pids"`
	Kind       string   `json:"kind"`
	Reasons    []string `json:"reasons"`
	Evidence   []string `json:"evidence"`
	RSSBytes   uint64   `json:"rss_bytes"`
	AgeSeconds int64    `json:"age_seconds"`
	Cmdline    string   `json:"cmdline"`
	WhyNot     string   `json:"why_not"`
}

// addUnmatched lists the trees no rule of pol matched, each with why.
func (r *Report) addUnmatched(pol *policy.Policy, res *scan.Result, plan *policy.Plan) {
	s := res.Tree.Snap
	r.UnmatchedTrees = []UnmatchedTree{}
	for _, f := range plan.UnmatchedFindings {
		r.UnmatchedTrees = append(r.UnmatchedTrees, UnmatchedTree{
			RootPID: f.Root.PID, PIDs: f.PIDs(), Kind: string(f.Kind), Reasons: reasonStrings(f.Reasons),
			Evidence: append([]string{}, f.Evidence...), RSSBytes: f.RSS, AgeSeconds: int64(s.Age(f.Root).Seconds()),
			Cmdline: commandLine(s, f.Root), WhyNot: pol.WhyNot(s, f),
		})
	}
}

// Finding is one tree that matched a rule.
type Finding struct {
	RootPID  int            `json:"root_pid"`
	PIDs     []int          `json:"pids"`
	Kind     string         `json:"kind"`
	Reasons  []string       `json:"reasons"`
	Owner    string         `json:"owner"`
	RunID    string         `json:"run_id"`
	Rule     string         `json:"rule"`
	Action   string         `json:"action"`
	Outcome  policy.Outcome `json:"outcome"`
	Detail   string         `json:"detail"`
	RSSBytes uint64         `json:"rss_bytes"`
	// PSSBytes is the tree's proportional set size — shared pages divided
	// among the processes that map them — when every member's was read
	// (smaps_rollup, Linux, as root or the same user): what its exit would
	// free, which RSS overstates.
	PSSBytes   uint64 `json:"pss_bytes,omitempty"`
	AgeSeconds int64  `json:"age_seconds"`
	Cmdline    string `json:"cmdline"`
	// UID is the root's real uid (-1: it could not be read), User its
	// name on this host ("" when the host has none, or the table is a
	// fixture's, whose users are another machine's).
	UID  int64  `json:"uid"`
	User string `json:"user"`

	// Additions: the evidence behind the reasons, the root's start identity
	// (what a signal is checked against), and the owner pid evidence named.
	Evidence []string `json:"evidence"`
	Start    string   `json:"start"`
	OwnerPID int      `json:"owner_pid"`
	// PTYs are the pseudo-terminals the tree's processes hold.
	PTYs []PTYRef `json:"ptys"`
	// Deferred: refused by design, not for doubt or failure (younger than
	// min_age; spared because it became owned); its outcome is then
	// "deferred". A later run decides again.
	Deferred bool `json:"deferred,omitempty"`
	// DueAt, for a tree younger than min_age, is when it reaches it
	// (RFC 3339, UTC): the first run after may act on it.
	DueAt string `json:"due_at,omitempty"`
	// Ended, for a tree the reap removed, is what ended it: "SIGTERM" (it
	// left within the grace), "SIGKILL" (after the grace), "cgroup.kill".
	Ended string `json:"ended,omitempty"`
	// Cgroups, for a tree killed as a unit, are the cgroup v2 paths whose
	// cgroup.kill ended it: its confinement, or a cgroup it owned.
	Cgroups []string `json:"cgroups,omitempty"`
	// Activity, for run-done findings, says whether the tree kept working
	// after the run's end.
	Activity *Activity `json:"activity,omitempty"`

	// Members are the tree's processes in pre-order, with what the table
	// shows of each: a table can be rebuilt from the JSON alone.
	Members []Member `json:"members"`

	procs     []*platform.Process // the members, for what is read of them later (SetPTYs)
	terminals []PTYRef            // the terminals the snapshot knows (tty or stdio)
}

// Member is one process of a finding's tree.
type Member struct {
	PID        int    `json:"pid"`
	PPID       int    `json:"ppid"`
	UID        int64  `json:"uid"`   // the real uid; -1: not readable
	User       string `json:"user"`  // its name here ("" as for Finding.User)
	Depth      int    `json:"depth"` // below the root, which is 0
	AgeSeconds int64  `json:"age_seconds"`
	RSSBytes   uint64 `json:"rss_bytes"`
	Cmdline    string `json:"cmdline"`
}

// LedgerEntry is one run a ledger names and what it maps to now.
type LedgerEntry struct {
	Ledger string `json:"ledger"`
	RunID  string `json:"run_id"`
	PID    int    `json:"pid"`
	Status string `json:"status"`

	// Additions: "ledger-stale" or "pid-reused" (information, never a
	// reason to signal), and what the check found.
	Info   string `json:"info,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Zombie is a defunct process and the parent that has not reaped it.
type Zombie struct {
	PID           int    `json:"pid"`
	PPID          int    `json:"ppid"`
	ParentCmdline string `json:"parent_cmdline"`
}

// UnknownEntry is a process whose parent is not visible.
type UnknownEntry struct {
	PID  int    `json:"pid"`
	PPID int    `json:"ppid"`
	Comm string `json:"comm"`
}

// PTY is pseudo-terminal usage.
type PTY struct {
	InUse          int       `json:"in_use"`
	Max            int       `json:"max"`
	HeldByFindings int       `json:"held_by_findings"`
	Dead           []DeadPTY `json:"dead"`
}

// Totals sum up the findings.
type Totals struct {
	Findings         int    `json:"findings"`
	Processes        int    `json:"processes"`
	ReclaimableBytes uint64 `json:"reclaimable_bytes"`
	Unmatched        int    `json:"unmatched"`
	// OutOfScope counts other users' orphaned trees a reaper that is not
	// root passed over (it acts on its own uid's alone).
	OutOfScope int `json:"out_of_scope,omitempty"`
	// Own counts the reparented trees rooted at this reaper or one of its
	// ancestors: left out of the findings and of --all's list.
	Own int `json:"own,omitempty"`
	// InUse counts the reparented trees a rule matched that a live process
	// outside them can still write to the stdin of: in use, no findings.
	InUse int `json:"in_use,omitempty"`
}

// newReport builds the report of a plan over res, as the scan found it.
func newReport(pol *policy.Policy, res *scan.Result, plan *policy.Plan) *Report {
	s := res.Tree.Snap
	users := userNames{}
	r := &Report{
		SchemaVersion: SchemaVersion,
		Mode:          string(plan.Mode),
		Processes:     len(s.Procs),
		Findings:      []Finding{},
		Ledger:        []LedgerEntry{},
		Zombies:       []Zombie{},
		Errors:        []string{},
		Time:          s.Taken.UTC().Truncate(time.Second),
		BootID:        s.BootID,
		Policy:        pol.Source,
		Unknown:       []UnknownEntry{},
		PTY:           PTY{InUse: s.PTY.InUse, Max: s.PTY.Max, Dead: []DeadPTY{}},
		ZombieGroups:  zombieGroups(s, res.ZombieGroups()),
		Advice:        append([]scan.Advice{}, res.Advice...),
	}
	ptys := map[int]bool{}
	for _, it := range plan.Items {
		f := it.Finding
		fd := users.findingOf(s, f)
		fd.Rule = it.Rule.Name
		fd.decide(it)
		r.Findings = append(r.Findings, fd)
		last := &r.Findings[len(r.Findings)-1]
		r.Totals.Processes += len(f.Members)
		r.Totals.ReclaimableBytes += f.RSS
		for _, m := range f.Members {
			last.procs = append(last.procs, m.Proc)
			if term := s.Terminal(m.Proc); term.PTS >= 0 {
				ptys[term.PTS] = true
				last.terminals = append(last.terminals, PTYRef{PTS: term.PTS, Role: "slave", PID: m.Proc.PID, HungUp: term.HungUp})
			}
		}
	}
	r.Totals.Findings = len(r.Findings)
	r.Totals.Unmatched = plan.Unmatched
	r.Totals.OutOfScope = plan.OutOfScope
	r.Totals.Own = plan.Own
	r.Totals.InUse = plan.InUse
	r.PTY.HeldByFindings = len(ptys)
	for _, lr := range res.Ledger {
		r.Ledger = append(r.Ledger, LedgerEntry{Ledger: lr.Ledger.Source, RunID: lr.Run.ID, PID: lr.Run.PID,
			Status: string(lr.Status), Info: lr.Info, Detail: lr.Detail})
	}
	for _, z := range res.Zombies {
		e := Zombie{PID: z.Proc.PID, PPID: z.Proc.PPID}
		if z.Parent != nil {
			e.ParentCmdline = commandLine(s, z.Parent)
		}
		r.Zombies = append(r.Zombies, e)
	}
	for _, u := range res.Unknown {
		r.Unknown = append(r.Unknown, UnknownEntry{PID: u.Proc.PID, PPID: u.Proc.PPID, Comm: u.Proc.Comm})
	}
	sort.Slice(r.Findings, func(i, j int) bool { return r.Findings[i].RootPID < r.Findings[j].RootPID })
	return r
}

// decide records the plan's decision about f.
func (f *Finding) decide(it policy.Item) {
	f.Action, f.Outcome, f.Detail = string(it.Action), it.Outcome, it.Detail
	f.Deferred = it.Outcome == policy.Refused && it.Benign
	if f.Deferred {
		// Refused by design, not for doubt: an outcome of its own, as
		// the table and the metrics say (deferred stays for readers of
		// schema 1's flag).
		f.Outcome = policy.Deferred
	}
	f.DueAt = ""
	if f.Deferred && !it.Due.IsZero() {
		f.DueAt = it.Due.UTC().Format(time.RFC3339)
	}
}

// setOutcomes records what was done: each item's action, outcome and
// detail, and the pids its action covered (rescans included), by root.
func (r *Report) setOutcomes(plan *policy.Plan, covered map[int][]int) {
	byRoot := map[int]*Finding{}
	for i := range r.Findings {
		byRoot[r.Findings[i].RootPID] = &r.Findings[i]
	}
	for _, it := range plan.Items {
		f := byRoot[it.Finding.Root.PID]
		if f == nil {
			continue
		}
		f.decide(it)
		if pids := covered[f.RootPID]; len(pids) > 0 {
			f.PIDs = pids
		}
	}
}

// setPSS counts, for each finding, what its exit would free in the
// reclaimable total: each member's PSS where it was read (pss, by pid),
// its RSS otherwise. A finding's PSSBytes is set when every member's was
// read.
func (r *Report) setPSS(pss map[int]uint64) {
	for i := range r.Findings {
		f := &r.Findings[i]
		var rss, reclaim, sum uint64
		all := len(f.Members) > 0
		for _, m := range f.Members {
			rss += m.RSSBytes
			if v, ok := pss[m.PID]; ok {
				reclaim += v
				sum += v
			} else {
				reclaim += m.RSSBytes
				all = false
			}
		}
		r.Totals.ReclaimableBytes += reclaim - rss
		if all {
			f.PSSBytes = sum
		}
	}
}

// setEndings says, of each tree the reap killed, what ended it, from the
// signals sent (each record's RootPID, Signal, Via and Result): SIGTERM
// when no SIGKILL was needed; and of a tree killed as a unit, which
// cgroups.
func (r *Report) setEndings(signals []Record) {
	ended := map[int]string{}
	cgroups := map[int][]string{}
	for _, s := range signals {
		switch {
		case s.Result != "ok":
		case s.Via != "":
			// "CALL PATH": the call that ended a unit whole (cgroup.kill;
			// TerminateJobObject on Windows), and the unit; or "CALL"
			// alone, Windows' TerminateProcess for a signal it has not.
			call, path, _ := strings.Cut(s.Via, " ")
			ended[s.RootPID] = call
			if path != "" && !slices.Contains(cgroups[s.RootPID], path) {
				cgroups[s.RootPID] = append(cgroups[s.RootPID], path)
			}
		case s.Signal == "SIGKILL" && (ended[s.RootPID] == "" || ended[s.RootPID] == "SIGTERM"):
			ended[s.RootPID] = "SIGKILL"
		case s.Signal == "SIGTERM" && ended[s.RootPID] == "":
			ended[s.RootPID] = "SIGTERM"
		}
	}
	for i := range r.Findings {
		if f := &r.Findings[i]; f.Outcome == policy.Killed {
			f.Ended, f.Cgroups = ended[f.RootPID], cgroups[f.RootPID]
		}
	}
}

func reasonStrings(rs []scan.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// WriteJSON writes r as one indented JSON object and a newline.
func (r *Report) WriteJSON(w io.Writer) error { return WriteJSON(w, r) }

// WriteJSON writes v as one indented JSON object and a newline: the one
// encoding of every command's JSON output — JSON's sink. encoding/json
// makes every string valid UTF-8 and escapes C0 controls; the bidi
// controls it leaves raw are escaped here too (\u202e: the same string
// to a parser), so that JSON shown in a terminal reads as it is.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := b.Bytes()
	if bytes.ContainsFunc(out, bidi) {
		var esc bytes.Buffer
		for _, r := range string(out) {
			if bidi(r) {
				fmt.Fprintf(&esc, `\u%04x`, r)
				continue
			}
			esc.WriteRune(r)
		}
		out = esc.Bytes()
	}
	_, err := w.Write(out)
	return err
}

// bidi reports whether r is a Unicode bidirectional control (isControl's
// above C1).
func bidi(r rune) bool { return r >= 0x061c && isControl(r) }

// maxCmdline is how much of a command line the report keeps: the first
// 4 KiB of the 64 KiB the snapshot reads (platform.MaxDetail), so that a
// user's processes add at most that much each to every report, audit
// record and journal entry.
const maxCmdline = 4 << 10

// commandLine is p's command line as the report keeps it, cut at
// maxCmdline with "…" where it was longer.
func commandLine(s *platform.Snapshot, p *platform.Process) string {
	return CommandLine(s, p)
}

// Printable escapes what must not reach a terminal, a log line or a
// D-Bus string raw, so that a hostile comm or argv ("foo\nbar", terminal
// escapes) cannot forge lines of the table: C0 and C1 controls and the
// bidi overrides (isControl), and every byte that is not valid UTF-8,
// as \xNN — a lone 0x9B is the 8-bit CSI to a terminal that takes C1
// raw, and no rune at all to a range loop, which would let it through.
// The result is valid UTF-8 with no control in it.
func Printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case isControl(r):
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isControl reports whether r must not reach a terminal raw: C0 and C1
// controls, and the Unicode bidirectional controls (U+061C, U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069), with which a process name could
// reverse how a table row reads.
func isControl(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// perProcess matches a per-process read problem: "read /proc/123/environ:
// permission denied".
var perProcess = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^read (\S+)/[0-9]+/(\S+): (.+)$`) })

// aggregate folds per-process read problems of the same file and cause
// into one line with a count — a scan as an ordinary user cannot read
// other users' environments, and a line per process said nothing more —
// and keeps every other warning as it is, in order.
func aggregate(warnings []string) []string {
	type key struct{ root, file, why string }
	count := map[key]int{}
	var order []key
	var out []string
	for _, w := range warnings {
		m := perProcess().FindStringSubmatch(w)
		if m == nil {
			out = append(out, w)
			continue
		}
		k := key{m[1], m[2], m[3]}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	for _, k := range order {
		n := count[k]
		what := "1 process"
		if n != 1 {
			what = strconv.Itoa(n) + " processes"
		}
		hint := ""
		if strings.Contains(k.why, "permission denied") {
			hint = " (other users' processes: run as root to check them; what depends on them is not checked)"
		}
		out = append(out, fmt.Sprintf("%s: read %s/*/%s: %s%s", what, k.root, k.file, k.why, hint))
	}
	return out
}

// findingOf is the report's finding for the tree f before any rule is
// applied: what it is, whose, and its members.
func (u userNames) findingOf(s *platform.Snapshot, f *scan.Finding) Finding {
	fd := Finding{
		RootPID:    f.Root.PID,
		PIDs:       f.PIDs(),
		Kind:       string(f.Kind),
		Reasons:    reasonStrings(f.Reasons),
		Owner:      f.Owner,
		RunID:      f.RunID,
		RSSBytes:   f.RSS,
		AgeSeconds: int64(s.Age(f.Root) / time.Second),
		Cmdline:    commandLine(s, f.Root),
		Evidence:   f.Evidence,
		Start:      s.Identity(f.Root),
		OwnerPID:   f.OwnerPID,
		PTYs:       []PTYRef{},
		Members:    make([]Member, 0, len(f.Members)),
	}
	fd.UID, fd.User = u.of(s, f.Root)
	for _, m := range f.Members {
		uid, user := u.of(s, m.Proc)
		fd.Members = append(fd.Members, Member{PID: m.Proc.PID, PPID: m.Proc.PPID, UID: uid, User: user, Depth: m.Depth,
			AgeSeconds: int64(s.Age(m.Proc) / time.Second), RSSBytes: m.Proc.RSS, Cmdline: commandLine(s, m.Proc)})
	}
	return fd
}

// NewFinding is the report's finding for a tree no rule matched
// (reaper explain): the tree, whose it is, and its members.
func NewFinding(s *platform.Snapshot, f *scan.Finding) *Finding {
	fd := userNames{}.findingOf(s, f)
	return &fd
}

// ProcessUser is p's real uid (-1: not readable) and its user's name, as
// a report names them ("" for a fixture's table).
func ProcessUser(s *platform.Snapshot, p *platform.Process) (int64, string) {
	return userNames{}.of(s, p)
}

// userNames looks up user names once per uid. A fixture's table (Self 0)
// is another machine's: its uids have no names here.
type userNames map[uint32]string

// of returns p's real uid (-1 when it could not be read) and its name.
func (u userNames) of(s *platform.Snapshot, p *platform.Process) (int64, string) {
	uid := s.UID(p)
	if uid == platform.NoUID {
		return -1, ""
	}
	if s.Self == 0 {
		return int64(uid), ""
	}
	name, ok := u[uid]
	if !ok {
		name = policy.UserName(uid)
		u[uid] = name
	}
	return int64(uid), name
}

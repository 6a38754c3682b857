package audit

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
)

// WriteMetrics writes r as Prometheus text-format metrics to path, for
// node_exporter's textfile collector. The file is replaced atomically (temp
// file in the same directory, fsync, rename), so the collector never reads
// half a file.
// w is the watch's own figures (nil: a run of its own, which has none).
func WriteMetrics(path string, r *Report, signals []Record, took time.Duration, w *WatchMetrics) error {
	return platform.WriteFileAtomic(path, MetricsText(r, signals, took, w, time.Now()), 0o644)
}

// MetricsText is r's metrics in the Prometheus text format, as the
// textfile holds them and a watch's --metrics-listen serves them; now is
// the run's end (reaper_last_success_timestamp_seconds).
func MetricsText(r *Report, signals []Record, took time.Duration, w *WatchMetrics, now time.Time) []byte {
	var b bytes.Buffer
	gauge := func(name, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}

	gauge("reaper_findings", "Findings of the last run by rule, kind, action and outcome (deferred: younger than min_age, not yet due).")
	counts := map[string]int{}
	for _, f := range r.Findings {
		outcome := f.Outcome
		if f.Deferred {
			outcome = policy.Deferred // refused by design, not for doubt: no alert's business
		}
		counts[labels("rule", f.Rule, "kind", f.Kind, "action", f.Action, "outcome", string(outcome))]++
	}
	writeCounts(&b, "reaper_findings", counts)

	gauge("reaper_finding_reasons", "Findings of the last run that carry each reason.")
	reasons := map[string]int{}
	for _, f := range r.Findings {
		for _, reason := range f.Reasons {
			reasons[labels("reason", reason)]++
		}
	}
	writeCounts(&b, "reaper_finding_reasons", reasons)

	gauge("reaper_signals", "Signals the last run sent, by signal and result (dry-run: signal 0).")
	sent := map[string]int{}
	for _, s := range signals {
		result := s.Result
		if i := strings.IndexByte(result, ':'); i > 0 {
			result = result[:i] // "refused: …" → "refused"
		}
		sent[labels("signal", s.Signal, "result", result)]++
	}
	writeCounts(&b, "reaper_signals", sent)

	gauge("reaper_finding_processes", "Processes in the trees of the last run's findings.")
	fmt.Fprintf(&b, "reaper_finding_processes %d\n", r.Totals.Processes)
	gauge("reaper_reclaimable_bytes", "Memory the last run's findings hold: each process's PSS where readable (shared pages counted once), else its RSS.")
	fmt.Fprintf(&b, "reaper_reclaimable_bytes %d\n", r.Totals.ReclaimableBytes)
	gauge("reaper_processes", "Processes in the process table at the last run.")
	fmt.Fprintf(&b, "reaper_processes %d\n", r.Processes)
	gauge("reaper_zombies", "Defunct processes at the last run.")
	fmt.Fprintf(&b, "reaper_zombies %d\n", len(r.Zombies))
	gauge("reaper_unknown_processes", "Processes whose parent the last run could not see.")
	fmt.Fprintf(&b, "reaper_unknown_processes %d\n", len(r.Unknown))
	gauge("reaper_pty_dead", "Pseudo-terminals held by findings that are dead (master closed, or held by findings only).")
	fmt.Fprintf(&b, "reaper_pty_dead %d\n", len(r.PTY.Dead))
	gauge("reaper_zombies_under_init", "Zombies whose parent is PID 1: an init that does not reap.")
	underInit := 0
	for _, z := range r.ZombieGroups {
		if z.Init {
			underInit += z.Count
		}
	}
	fmt.Fprintf(&b, "reaper_zombies_under_init %d\n", underInit)
	if r.PTY.Max > 0 {
		gauge("reaper_pty_in_use", "Pseudo-terminals allocated (kernel.pty.nr).")
		fmt.Fprintf(&b, "reaper_pty_in_use %d\n", r.PTY.InUse)
		gauge("reaper_pty_max", "Pseudo-terminal limit (kernel.pty.max).")
		fmt.Fprintf(&b, "reaper_pty_max %d\n", r.PTY.Max)
	}
	gauge("reaper_run_duration_seconds", "Wall time of the last run.")
	fmt.Fprintf(&b, "reaper_run_duration_seconds %g\n", took.Seconds())
	gauge("reaper_last_success_timestamp_seconds", "Unix time the last run finished.")
	fmt.Fprintf(&b, "reaper_last_success_timestamp_seconds %d\n", now.Unix())
	if w != nil {
		w.write(&b)
	}
	return b.Bytes()
}

// labels is a label set, each value through the sink's one function
// (Label: redacted, clipped, escaped).
func labels(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+`="`+Label(kv[i+1])+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// perUser counts the series of one family each user's processes and
// records make, so that no user makes more than MaxSeriesPerUser: what
// comes past it is the user's one series more, named more.
type perUser map[string]map[string]bool

// name is what a series of user's named name is called: name itself
// while the user has fewer than MaxSeriesPerUser, else more.
func (u perUser) name(user, name, more string) string {
	seen := u[user]
	if seen == nil {
		seen = map[string]bool{}
		u[user] = seen
	}
	if seen[name] || len(seen) < MaxSeriesPerUser {
		seen[name] = true
		return name
	}
	return more
}

func writeCounts(b *bytes.Buffer, name string, counts map[string]int) {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s%s %d\n", name, k, counts[k])
	}
}

// WatchMetrics are what `reaper watch` adds to each pass's metrics: its
// counts since it started (counters: Prometheus' rate() takes a restart
// in its stride) and what it watches now.
type WatchMetrics struct {
	// Passes counts passes by trigger (start, hint, min_age, backstop,
	// reload, retry: a pass again soon after one whose users' state was not read).
	Passes map[string]uint64
	// Owners is how many owners' exits are watched now; Unwatched how
	// many the last pass named that could not be (the backstop covers
	// them); Watching is false where exits cannot be watched at all.
	Owners, Unwatched int
	Watching          bool
	// HintsIgnored counts owners' exits past their user's budget.
	HintsIgnored uint64
	// Reaction sums, over hint passes that ended a tree, the time from the
	// first owner's exit they passed on to the pass's end; ReactionCount
	// counts them.
	Reaction      time.Duration
	ReactionCount uint64
	// StateReads counts the state dirs passes read, StateReused those a
	// pass took as the previous one read them (gather.Cache).
	StateReads, StateReused uint64
	// Dirs is how many state dirs are watched for new owners' files.
	Dirs int
	// Heartbeat is when the last pass completed: it advances on every
	// pass, so a watch that stopped working is one whose heartbeat ages.
	Heartbeat time.Time
	// Copies and Headroom are the last pass's live figures (ps's
	// copies and headroom).
	Copies   []ServerCopies
	Headroom []Headroom
	// Storms are the fork storms going on, StormsSaid how many were said
	// since the start, StormsSeen how ("" where none can be).
	Storms     []Storm
	StormsSaid uint64
	StormsSeen string
}

func (w *WatchMetrics) write(b *bytes.Buffer) {
	counter := func(name, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	}
	counter("reaper_watch_passes_total", "Passes reaper watch made since it started, by what triggered them.")
	passes := map[string]int{}
	for trigger, n := range w.Passes {
		passes[labels("trigger", trigger)] = int(n)
	}
	writeCounts(b, "reaper_watch_passes_total", passes)
	counter("reaper_watch_hints_ignored_total", "Owners' exits past their user's budget of hints: the backstop covers them.")
	fmt.Fprintf(b, "reaper_watch_hints_ignored_total %d\n", w.HintsIgnored)
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", "reaper_watch_owners", "Owners whose exit reaper watch is watching; watching=\"false\" where exits cannot be watched (every pass is the backstop's).", "reaper_watch_owners")
	fmt.Fprintf(b, "reaper_watch_owners{watching=\"%t\"} %d\n", w.Watching, w.Owners)
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", "reaper_watch_unwatched_owners", "Owners the last pass named that could not be watched: the backstop covers them.", "reaper_watch_unwatched_owners")
	fmt.Fprintf(b, "reaper_watch_unwatched_owners %d\n", w.Unwatched)
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s summary\n", "reaper_watch_reaction_seconds", "From an owner's exit to the end of the pass that ended a tree it left (hint passes).", "reaper_watch_reaction_seconds")
	fmt.Fprintf(b, "reaper_watch_reaction_seconds_sum %g\n", w.Reaction.Seconds())
	fmt.Fprintf(b, "reaper_watch_reaction_seconds_count %d\n", w.ReactionCount)
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", "reaper_watch_dirs", "Clients' dirs reaper watch watches for a new owner's file (inotify; 0 where it cannot).", "reaper_watch_dirs")
	fmt.Fprintf(b, "reaper_watch_dirs %d\n", w.Dirs)
	counter("reaper_watch_state_dirs_total", "Clients' state dirs passes went through: read (a reader child as root, for another user's), or reused as an earlier pass read them (a user none of whose trees the pass could act on).")
	writeCounts(b, "reaper_watch_state_dirs_total", map[string]int{labels("how", "read"): int(w.StateReads), labels("how", "reused"): int(w.StateReused)})
	gauge := func(name, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}
	gauge("reaper_watch_heartbeat_timestamp_seconds", "Unix time reaper watch last completed a pass: it advances on every pass (at least every --backstop); an old one is a watch that stopped working.")
	fmt.Fprintf(b, "reaper_watch_heartbeat_timestamp_seconds %.3f\n", float64(w.Heartbeat.UnixMilli())/1000)
	w.writeLive(b, gauge)
	counter("reaper_fork_storms_total", "Fork storms reaper watch has said since it started: a parent starting processes faster than the policy's storm_rate for storm_for.")
	fmt.Fprintf(b, "reaper_fork_storms_total %d\n", w.StormsSaid)
	gauge("reaper_fork_storm_rate", "Processes a second each parent in a fork storm now starts — or, pid 0, a user's processes from many parents or adopted by an init (seen: fork events, or sampled: a lower bound).")
	rates := map[string]int{}
	stormsOf := perUser{}
	for _, s := range w.Storms {
		pid := stormsOf.name(s.User, fmt.Sprint(s.PID), "")
		if pid == "" {
			continue // past the user's bound: counted in reaper_fork_storms_total
		}
		rates[labels("pid", pid, "comm", s.Comm, "user", s.User, "seen", s.Seen)] = max(rates[labels("pid", pid, "comm", s.Comm, "user", s.User, "seen", s.Seen)], s.Rate)
	}
	writeCounts(b, "reaper_fork_storm_rate", rates)
}

// writeLive writes the copies of servers across live sessions and each
// user's headroom.
func (w *WatchMetrics) writeLive(b *bytes.Buffer, gauge func(name, help string)) {
	gauge("reaper_server_copies", "Copies of one MCP server that several live sessions of a user each run (ps's duplicates): never a finding.")
	copies, held := map[string]int{}, map[string]int{}
	bounded := perUser{}
	for _, d := range w.Copies {
		// Never the command line: its config's name, its program's, or
		// a hash (ServerLabel); each user's servers bounded.
		server := bounded.name(d.User, ServerLabel(d.Name, d.Command), "(more)")
		l := labels("server", server, "user", d.User)
		copies[l] += d.Copies
		held[l] += int(d.MemoryBytes)
	}
	writeCounts(b, "reaper_server_copies", copies)
	gauge("reaper_server_copies_bytes", "Memory (PSS, as ps shows it) the copies of a server across live sessions hold together, with what they run.")
	writeCounts(b, "reaper_server_copies_bytes", held)
	gauge("reaper_user_tasks", "Each user's tasks (processes and threads; zombies count one), as RLIMIT_NPROC counts them.")
	tasks, limits, percent := map[string]int{}, map[string]int{}, map[string]int{}
	for _, h := range w.Headroom {
		user := h.User
		if user == "" {
			user = fmt.Sprint(h.UID)
		}
		tasks[labels("user", user)] = h.Tasks
		if h.ProcessLimit > 0 {
			limits[labels("user", user, "limit", "rlimit_nproc")] = int(h.ProcessLimit)
		}
		if h.PIDsMax > 0 {
			limits[labels("user", user, "limit", "pids_max")] = int(h.PIDsMax)
		}
		percent[labels("user", user)] = h.Percent
	}
	writeCounts(b, "reaper_user_tasks", tasks)
	gauge("reaper_user_task_limit", "Each user's process limits: RLIMIT_NPROC of their newest processes (macOS: kern.maxprocperuid), and the tightest pids.max over their cgroup.")
	writeCounts(b, "reaper_user_task_limit", limits)
	gauge("reaper_user_limit_percent", "How full each user's fuller process limit is, in percent: past 80, reaper warns; at 100, fork fails.")
	writeCounts(b, "reaper_user_limit_percent", percent)
}

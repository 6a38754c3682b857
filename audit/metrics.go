package audit

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// WriteMetrics writes r as Prometheus text-format metrics to path, for
// node_exporter's textfile collector. The file is replaced atomically (temp
// file in the same directory, fsync, rename), so the collector never reads
// half a file.
// w is the watch's own figures (nil: a run of its own, which has none).
func WriteMetrics(path string, r *Report, signals []Record, took time.Duration, w *WatchMetrics) error {
	var b bytes.Buffer
	gauge := func(name, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}

	gauge("reaper_findings", "Findings of the last run by rule, kind, action and outcome (deferred: younger than min_age, not yet due).")
	counts := map[string]int{}
	for _, f := range r.Findings {
		outcome := f.Outcome
		if f.Deferred {
			outcome = "deferred" // refused by design, not for doubt: no alert's business
		}
		counts[labels("rule", f.Rule, "kind", f.Kind, "action", f.Action, "outcome", outcome)]++
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
	fmt.Fprintf(&b, "reaper_last_success_timestamp_seconds %d\n", time.Now().Unix())
	if w != nil {
		w.write(&b)
	}
	return platform.WriteFileAtomic(path, b.Bytes(), 0o644)
}

func labels(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		// The text format escapes exactly \, " and newline in label values.
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1])
		parts = append(parts, kv[i]+`="`+v+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
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
	// reload).
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
}

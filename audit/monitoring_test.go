package audit

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The shipped alerting rules and Grafana dashboard query only metrics
// that reaper writes: a metric renamed here, or misspelt there, fails.
// (promtool test rules checks what the rules do, in CI.)
func TestMonitoringNamesMetrics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reaper.prom")
	rep := &Report{PTY: PTY{InUse: 3, Max: 4096}}
	// A watch's: its own series too (the rules on its heartbeat).
	if err := WriteMetrics(path, rep, nil, time.Second, &WatchMetrics{}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllSubmatch(text, -1) {
		written[string(m[1])] = true
	}
	if len(written) < 10 {
		t.Fatalf("only %d metrics written: %s", len(written), text)
	}
	for _, file := range []string{"../packaging/prometheus/reaper-alerts.yml", "../packaging/grafana/reaper-dashboard.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		used := regexp.MustCompile(`\breaper_[a-z_]+\b`).FindAllString(string(data), -1)
		if len(used) == 0 {
			t.Errorf("%s queries no reaper metric", file)
		}
		for _, name := range used {
			if !written[name] {
				t.Errorf("%s queries %s, which reaper does not write", file, name)
			}
		}
	}
}

// A watch's figures follow the run's: counters by trigger, what it
// watches, and the reaction summary; a run of its own writes none.
func TestWatchMetrics(t *testing.T) {
	dir := t.TempDir()
	w := &WatchMetrics{Passes: map[string]uint64{"start": 1, "hint": 4, "backstop": 2}, Owners: 7, Unwatched: 1,
		Watching: true, HintsIgnored: 3, Reaction: 1500 * time.Millisecond, ReactionCount: 4,
		Heartbeat: time.UnixMilli(1795900000250),
		Copies: []ServerCopies{{Command: "npx -y @acme/docs-mcp", Name: "docs", User: "alice", Copies: 3, MemoryBytes: 3 << 20},
			{Command: `node /srv/"odd".js`, User: "alice", Copies: 2, MemoryBytes: 1 << 20}},
		Headroom: []Headroom{{UID: 1000, User: "alice", Tasks: 850, ProcessLimit: 1000, PIDsMax: 4915, Percent: 85}, {UID: 4242, Tasks: 3}},
		Storms: []Storm{{PID: 4242, Comm: "node", User: "alice", Rate: 120, Seen: "fork events"},
			{PID: 4343, Comm: "x\xff\x1by", User: "bob", Rate: 50, Seen: "fork events"}},
		StormsSaid: 2}
	if err := WriteMetrics(filepath.Join(dir, "watch.prom"), &Report{}, nil, time.Second, w); err != nil {
		t.Fatal(err)
	}
	if err := WriteMetrics(filepath.Join(dir, "run.prom"), &Report{}, nil, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "watch.prom"))
	if !utf8.Valid(text) {
		t.Errorf("the metrics are not UTF-8:\n%q", text)
	}
	for _, line := range []string{
		"# TYPE reaper_watch_passes_total counter",
		`reaper_watch_passes_total{trigger="backstop"} 2` + "\n" + `reaper_watch_passes_total{trigger="hint"} 4` + "\n" + `reaper_watch_passes_total{trigger="start"} 1`,
		"reaper_watch_hints_ignored_total 3", `reaper_watch_owners{watching="true"} 7`, "reaper_watch_unwatched_owners 1",
		"# TYPE reaper_watch_reaction_seconds summary", "reaper_watch_reaction_seconds_sum 1.5", "reaper_watch_reaction_seconds_count 4",
		"reaper_watch_heartbeat_timestamp_seconds 1795900000.250",
		`reaper_server_copies{server="docs",user="alice"} 3`, `reaper_server_copies{server="\"odd\".js",user="alice"} 2`,
		`reaper_server_copies_bytes{server="docs",user="alice"} 3145728`,
		`reaper_user_tasks{user="4242"} 3` + "\n" + `reaper_user_tasks{user="alice"} 850`,
		`reaper_user_task_limit{user="alice",limit="pids_max"} 4915` + "\n" + `reaper_user_task_limit{user="alice",limit="rlimit_nproc"} 1000`,
		`reaper_user_limit_percent{user="alice"} 85`,
		"reaper_fork_storms_total 2", `reaper_fork_storm_rate{pid="4242",comm="node",user="alice",seen="fork events"} 120`,
		// A title that is not UTF-8, with a control: escaped, the text valid.
		`reaper_fork_storm_rate{pid="4343",comm="x\\xff\\x1by",user="bob",seen="fork events"} 50`,
	} {
		if !strings.Contains(string(text), line+"\n") {
			t.Errorf("%q not in:\n%s", line, text)
		}
	}
	if text, _ := os.ReadFile(filepath.Join(dir, "run.prom")); strings.Contains(string(text), "reaper_watch_") {
		t.Errorf("a run's metrics hold a watch's:\n%s", text)
	}
}

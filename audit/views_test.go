package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The pty view's table says what its model says — the legend only when a
// holder is starred, the not-root caveat only when not root, one line per
// terminal with both ends — and the same table comes back from its JSON.
func TestPTYViewTable(t *testing.T) {
	v := &PTYView{SchemaVersion: 1, InUse: 2, Max: 4096, Dead: []int{5}, Unreadable: 1, PTYs: []PTYEntry{
		{PTS: 3, Masters: []PTYHolder{{PID: 10, Cmdline: "tmux"}}, Slaves: []PTYHolder{{PID: 11, Cmdline: "bash\nrm -rf /", InFinding: true}}},
		{PTS: 5, Dead: true, Why: "no master", Slaves: []PTYHolder{{PID: 20, Cmdline: "sleep 600"}}},
	}}
	var table strings.Builder
	if err := Write(&table, v, "table", Style{}); err != nil {
		t.Fatal(err)
	}
	got := table.String()
	for _, want := range []string{
		"PTYs: 2 in use of 4096 (kernel.pty.nr / kernel.pty.max); 1 dead",
		"/dev/pts/3  in use\n  master 10 tmux\n  slave  11* bash\\nrm -rf /\n",
		"/dev/pts/5  DEAD\n    no master\n  master —\n  slave  20 sleep 600\n",
		"* part of a finding of the policy",
		"not root: other users' fds were not read",
		"1 process's fds could not be read",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	var js strings.Builder
	if err := Write(&js, v, "json", Style{Color: true}); err != nil {
		t.Fatal(err)
	}
	var back PTYView
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil {
		t.Fatal(err)
	}
	var again strings.Builder
	back.WriteTable(&again, Style{})
	if again.String() != got {
		t.Errorf("the table from the JSON differs:\n%s\nwant\n%s", again.String(), got)
	}
	v.AsRoot, v.PTYs[0].Slaves[0].InFinding = true, false
	table.Reset()
	v.WriteTable(&table, Style{})
	if strings.Contains(table.String(), "part of a finding") || strings.Contains(table.String(), "not root") {
		t.Errorf("legend or caveat with nothing starred, as root:\n%s", table.String())
	}
}

// Issue 52, item 9: ps cut every line at about 100 columns whatever the
// terminal, and an orphan's rule and action — what will happen to it,
// what ps is for — came last, after its reasons, and were cut first. They
// come first now, and a terminal's width is the width lines are cut at.
func TestPSOrphanLineShowsWhatWillHappen(t *testing.T) {
	long := "/usr/lib/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /home/ann/projects/a/very/long/path/indeed"
	v := &PSView{Orphans: []PSOrphan{{RootPID: 4242, Reasons: []string{"reparented", "owner-dead", "stdin-closed", "abandoned"},
		Owner: "claude-code", SessionID: "0b8f1c2e-1111-4222-8333-944455556666", Rule: "orphaned-agent-trees", Action: "terminate",
		Processes: []PSProcess{{PID: 4242, Kind: "mcp", Cmdline: "node " + long}}}}}
	for _, width := range []int{0, 80, 200} {
		var b strings.Builder
		if err := v.WriteTable(&b, Style{Width: width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "tree 4242") || !strings.Contains(out, "orphaned-agent-trees → terminate") {
			t.Errorf("width %d: the rule and action are not shown:\n%s", width, out)
		}
		if width == 200 && !strings.Contains(out, long) {
			t.Errorf("width 200: the command line is cut:\n%s", out)
		}
	}
}

// Issue 52, item 9: history listed dry runs and top's previews like real
// reaps, with no mode and no filter. Each line says its mode, the sums
// count the dry runs apart, and the filter takes one mode.
func TestHistoryTellsDryRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	now := time.Now()
	var lines []string
	for _, r := range []Record{
		{Time: now, Event: "decision", Mode: "reap", RootPID: 10, Rule: "r", Outcome: "killed", Cmdline: "killed-for-real"},
		{Time: now, Event: "decision", Mode: "dry-run", RootPID: 11, Rule: "r", Outcome: "planned", Cmdline: "only-planned"},
	} {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	h, err := ReadHistory([]string{path}, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	h.WriteTable(&b, Style{})
	out := b.String()
	for _, want := range []string{"MODE", "dry-run", "1 of them dry runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if h, _ := ReadHistory([]string{path}, HistoryFilter{Mode: "reap"}); len(h.Records) != 1 || h.Records[0].RootPID != 10 {
		t.Errorf("--mode reap: %+v", h.Records)
	}
}

// A killed tree's words in reap's report begin with the word history
// records for it, however it ended; a tree only reported is not called
// killed (the control).
func TestKilledWordsMatchHistory(t *testing.T) {
	for _, ended := range []string{"", "SIGTERM", "SIGKILL", "cgroup.kill"} {
		if w := outcomeWords(&Finding{Outcome: "killed", Ended: ended}); !strings.HasPrefix(w, "killed") {
			t.Errorf("ended by %q: %q, want it to begin with history's \"killed\"", ended, w)
		}
	}
	if w := outcomeWords(&Finding{Outcome: "reported"}); strings.Contains(w, "killed") {
		t.Errorf("reported: %q", w)
	}
}

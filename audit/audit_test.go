package audit

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"node server.js", "node server.js"},
		{"evil\nname", `evil\nname`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"tab\there", `tab\there`},
		{"ünïcode ok", "ünïcode ok"},
		{"c1 \u009b control", `c1 \u009b control`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"isolate \u2066x\u2069", `isolate \u2066x\u2069`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLastSiblings(t *testing.T) {
	// root ─┬─ a ─── a1
	//       └─ b ─┬─ b1
	//             └─ b2
	depths := []int{0, 1, 2, 1, 2, 2}
	ms := make([]Member, len(depths))
	for i, d := range depths {
		ms[i] = Member{PID: i + 1, Depth: d}
	}
	got := lastSiblings(ms)
	want := []bool{true, false, true, true, false, true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lastSiblings = %v, want %v", got, want)
	}
}

func TestHumanUnits(t *testing.T) {
	bytes := map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 50 << 20: "50.0 MiB", 3 << 30: "3.0 GiB"}
	for n, want := range bytes {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	ages := map[time.Duration]string{
		5 * time.Second: "5s", 65 * time.Second: "1m05s", 2*time.Hour + 3*time.Minute: "2h03m",
		50 * time.Hour: "2d02h",
	}
	for d, want := range ages {
		if got := HumanAge(d); got != want {
			t.Errorf("HumanAge(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestLabelsEscape(t *testing.T) {
	if got, want := labels("rule", `a"b\c`+"\n"), `{rule="a\"b\\c\n"}`; got != want {
		t.Errorf("labels = %s, want %s", got, want)
	}
}

// The audit log: signals first, in the order sent, each one line; a signal
// that went to a cgroup as a unit says so in "via"; then one decision per
// finding.
func TestAppendLog(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	r := &Report{Mode: "reap", Time: at, Findings: []Finding{{RootPID: 300, Start: "b:1", PIDs: []int{300, 301},
		Kind: "acp", Reasons: []string{"owner-dead"}, Rule: "r", Action: "terminate", Outcome: "killed",
		UID: 1001, User: "alice", Cmdline: "node server.mjs", RSSBytes: 48 << 20}}}
	signals := []Record{
		{Time: at, Event: "signal", RootPID: 300, PID: 300, Start: "b:1", Signal: "SIGTERM", Result: "ok"},
		{Time: at, Event: "signal", RootPID: 300, PID: 301, Start: "b:2", Signal: "SIGKILL", Via: "cgroup.kill /x.scope", Result: "ok"},
	}
	if err := AppendLog(path, r, signals); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b)
	}
	var recs []Record
	for _, l := range lines {
		var rec Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, rec)
	}
	if strings.Contains(lines[0], `"via"`) || recs[1].Via != "cgroup.kill /x.scope" {
		t.Errorf("via: %q, %q", lines[0], lines[1])
	}
	if recs[2].Event != "decision" || recs[2].Outcome != "killed" || recs[0].Mode != "reap" {
		t.Errorf("records %+v", recs)
	}
	if d := recs[2]; d.UID == nil || *d.UID != 1001 || d.User != "alice" || d.Cmdline != "node server.mjs" || d.RSSBytes != 48<<20 {
		t.Errorf("decision %+v: want whose tree it was (uid, user), its command line and RSS", d)
	}
	if strings.Contains(lines[0], `"uid"`) || strings.Contains(lines[0], `"cmdline"`) {
		t.Errorf("a signal record carries a decision's fields: %s", lines[0])
	}
}

// Per-process read problems fold into one line per file and cause.
func TestAggregateWarnings(t *testing.T) {
	got := aggregate([]string{
		"read /proc/10/environ: permission denied",
		"ledger x: odd",
		"read /proc/11/environ: permission denied",
		"read /proc/12/cgroup: permission denied",
		"read /proc/13/environ: permission denied",
	})
	want := []string{
		"ledger x: odd",
		"3 processes: read /proc/*/environ: permission denied (other users' processes: run as root to check them; what depends on them is not checked)",
		"1 process: read /proc/*/cgroup: permission denied (other users' processes: run as root to check them; what depends on them is not checked)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("aggregate:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// What ended each killed tree, and for one killed as a unit, which
// cgroups: from the signal records alone.
func TestEndings(t *testing.T) {
	r := &Report{Findings: []Finding{{RootPID: 10, Outcome: "killed"}, {RootPID: 20, Outcome: "killed"}, {RootPID: 30, Outcome: "killed"}, {RootPID: 40, Outcome: "failed"}}}
	r.setEndings([]Record{
		{RootPID: 10, PID: 10, Signal: "SIGTERM", Result: "ok"},
		{RootPID: 20, PID: 20, Signal: "SIGTERM", Result: "ok"},
		{RootPID: 20, PID: 21, Signal: "SIGKILL", Result: "ok"},
		{RootPID: 30, PID: 30, Signal: "SIGTERM", Result: "ok"},
		{RootPID: 30, PID: 30, Signal: "SIGKILL", Via: "cgroup.kill /a/reaper-1", Result: "ok"},
		{RootPID: 30, PID: 31, Signal: "SIGKILL", Via: "cgroup.kill /a/reaper-1", Result: "ok"},
		{RootPID: 30, PID: 32, Signal: "SIGKILL", Via: "cgroup.kill /b/own.scope", Result: "ok"},
		{RootPID: 40, PID: 40, Signal: "SIGKILL", Via: "cgroup.kill /c", Result: "ok"},
	})
	for i, want := range []struct {
		ended   string
		cgroups []string
	}{{"SIGTERM", nil}, {"SIGKILL", nil}, {"cgroup.kill", []string{"/a/reaper-1", "/b/own.scope"}}, {"", nil}} {
		f := r.Findings[i]
		if f.Ended != want.ended || !reflect.DeepEqual(f.Cgroups, want.cgroups) {
			t.Errorf("tree %d: ended %q, cgroups %q; want %q, %q", f.RootPID, f.Ended, f.Cgroups, want.ended, want.cgroups)
		}
	}
}

// What a finding's exit would free: each member's PSS where read, its RSS
// otherwise; the finding's own pss_bytes only when every member's was read.
func TestPSS(t *testing.T) {
	r := &Report{Findings: []Finding{
		{RootPID: 10, Members: []Member{{PID: 10, RSSBytes: 100}, {PID: 11, RSSBytes: 50}}},
		{RootPID: 20, Members: []Member{{PID: 20, RSSBytes: 300}, {PID: 21, RSSBytes: 200}}},
	}}
	r.Totals.ReclaimableBytes = 650                   // the RSS of all
	r.setPSS(map[int]uint64{10: 40, 11: 20, 20: 120}) // 21 unreadable: its RSS stands
	if r.Totals.ReclaimableBytes != 40+20+120+200 {
		t.Errorf("reclaimable %d, want %d", r.Totals.ReclaimableBytes, 40+20+120+200)
	}
	if r.Findings[0].PSSBytes != 60 || r.Findings[1].PSSBytes != 0 {
		t.Errorf("pss_bytes %d, %d; want 60, and none for a tree not read whole", r.Findings[0].PSSBytes, r.Findings[1].PSSBytes)
	}
}

// --quiet prints a dry run's plan — what it would do — where a reap prints
// nothing for what it only planned (the control: the same finding in a
// reap's report).
func TestQuietDryRunSaysItsPlan(t *testing.T) {
	for _, mode := range []string{"dry-run", "reap"} {
		r := &Report{Mode: mode, Findings: []Finding{{RootPID: 42, Kind: "mcp", Rule: "r", Action: "terminate", Outcome: "planned", Cmdline: "node x"}}}
		var b strings.Builder
		if err := r.WriteQuiet(&b); err != nil {
			t.Fatal(err)
		}
		if said := strings.Contains(b.String(), "reaper dry-run: tree 42 would terminate (mcp, rule r"); said != (mode == "dry-run") {
			t.Errorf("%s: --quiet said %q", mode, b.String())
		}
	}
}

// A report is made once from its facts and edits none of them: the
// outcomes a reap's report takes are not in the facts, nor in a report
// made from them before (a scan's, or the preview).
func TestNewReportLeavesItsFacts(t *testing.T) {
	facts := &Facts{Report{Findings: []Finding{{RootPID: 10, Action: "terminate", Outcome: "planned"}}}}
	pol := policy.Default(policy.Clients{})
	snap := platform.NewSnapshot(nil, "boot", time.Hour, time.Unix(0, 0))
	before := NewReport(facts, pol, snap, nil)
	plan := &policy.Plan{Items: []policy.Item{{Finding: &scan.Finding{Root: &platform.Process{PID: 10}}, Action: policy.Terminate, Outcome: policy.Killed}}}
	after := NewReport(facts, pol, snap, &Done{Plan: plan, Covered: map[int][]int{10: {10, 11}},
		Signals: []Record{{RootPID: 10, PID: 10, Signal: "SIGTERM", Result: "ok"}}, Warnings: []string{"the reap's own"}})
	if f := after.Findings[0]; f.Outcome != "killed" || f.Ended != "SIGTERM" || len(f.PIDs) != 2 || !slices.Contains(after.Warnings, "the reap's own") {
		t.Errorf("the reap's report: %+v, warnings %q", f, after.Warnings)
	}
	for name, f := range map[string]Finding{"the facts": facts.r.Findings[0], "the report before": before.Findings[0]} {
		if f.Outcome != "planned" || f.Ended != "" || f.PIDs != nil {
			t.Errorf("%s took the reap's outcome: %+v", name, f)
		}
	}
}

// The rotations beside a log, oldest first, found in a dir whose name a
// glob would read as a pattern ("[1]"), each spelled as the path was
// given; a name that only starts like one (".old", ".0") is none.
func TestLogFiles(t *testing.T) {
	dir := t.TempDir() + "/logs[1]"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"audit.jsonl", "audit.jsonl.1", "audit.jsonl.3.gz", "audit.jsonl.2.gz", "audit.jsonl.old", "audit.jsonl.0", "other.jsonl.1"} {
		if err := os.WriteFile(dir+"/"+n, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := dir + "/audit.jsonl"
	got, err := LogFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{path + ".3.gz", path + ".2.gz", path + ".1", path}; !slices.Equal(got, want) {
		t.Errorf("LogFiles = %q, want %q", got, want)
	}
}

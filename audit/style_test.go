package audit

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// styleViews are one of each table, with the words that get a colour.
func styleViews() map[string]Tabular {
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	members := []Member{
		{PID: 4242, PPID: 1, UID: 1000, User: "alice", AgeSeconds: 3600, RSSBytes: 50 << 20, Cmdline: "bash"},
		{PID: 4243, PPID: 4242, UID: 1000, User: "alice", Depth: 1, AgeSeconds: 3599, RSSBytes: 300 << 20, Cmdline: "node mcp-server.js"},
	}
	lone := []Member{{PID: 77, PPID: 1, UID: 1001, User: "bob", AgeSeconds: 60, RSSBytes: 20 << 20, Cmdline: "node server.js"}}
	rep := &Report{Mode: "reap", Time: at, Policy: "/etc/reaper/policy.toml", Processes: 300,
		Findings: []Finding{
			{Rule: "pty-dead", Kind: "pty", Action: "terminate", Outcome: "killed", Ended: "SIGTERM", Reasons: []string{"reparented"}, Members: members},
			{Rule: "mcp", Kind: "mcp", Action: "terminate", Outcome: "refused", Detail: "a live owner holds it", Members: lone},
			{Rule: "mcp", Kind: "mcp", Action: "terminate", Outcome: "failed", Members: lone},
		},
		PTY:      PTY{Dead: []DeadPTY{{PTS: 7, Why: "its master is closed", Slaves: []int{4242}}}},
		Errors:   []string{"/home/bob/.openclaw: permission denied"},
		Warnings: []string{"hidepid=2"},
	}
	uid := int64(1000)
	hist := &History{}
	hist.Totals.Outcomes = map[string]int{}
	for _, r := range []Record{
		{Time: at, Event: "decision", Outcome: "killed", Rule: "pty-dead", RootPID: 4242, UID: &uid, User: "alice", RSSBytes: 350 << 20, Cmdline: "bash"},
		{Time: at, Event: "signal", RootPID: 4242, PID: 4242, Signal: "SIGTERM", Result: "sent"},
		{Time: at, Event: "decision", Outcome: "refused", Rule: "a-much-longer-rule-name", RootPID: 77, Cmdline: "node x"},
		{Time: at, Event: "decision", Outcome: "reported", Rule: "mcp", RootPID: 78, Cmdline: "node y"},
	} {
		hist.add(r)
	}
	diag := &Diagnosis{Version: "v1.2.0", Platform: "linux/amd64", User: "root", Checks: []Check{
		{Status: CheckOK, Name: "pidfd", Summary: "pidfd_open works"},
		{Status: CheckWarn, Name: "timer", Summary: "reaper.timer is not enabled", Fix: "systemctl enable --now reaper.timer"},
		{Status: CheckFail, Name: "lock", Summary: "held by pid 12"},
		{Status: CheckInfo, Name: "journal", Summary: "journald is not listening"},
	}}
	ptys := &PTYView{InUse: 2, Max: 4096, Dead: []int{7}, AsRoot: true, PTYs: []PTYEntry{
		{PTS: 3, Masters: []PTYHolder{{PID: 10, Cmdline: "tmux"}}, Slaves: []PTYHolder{{PID: 11, Cmdline: "bash"}}},
		{PTS: 7, Dead: true, Why: "its master is closed", Slaves: []PTYHolder{{PID: 4242, Cmdline: "bash"}}},
	}}
	return map[string]Tabular{"report": rep, "history": hist, "doctor": diag, "pty": ptys}
}

var sgr = regexp.MustCompile("\x1b\\[[0-9]+m")

// Colour only adds escapes around reaper's own words: with them taken out,
// every table is the plain one byte for byte — so a coloured column of a
// tabwriter table stays aligned — and each view paints what it should.
func TestStyleColor(t *testing.T) {
	painted := map[string][]string{
		"report": {"\x1b[32mkilled by SIGTERM\x1b[0m", "\x1b[33mrefused\x1b[0m", "\x1b[31mfailed\x1b[0m",
			"\x1b[01mpty-dead\x1b[0m", "\x1b[31mdead PTY\x1b[0m", "\x1b[31mErrors\x1b[0m", "\x1b[33mwarning:\x1b[0m"},
		"history": {"\x1b[32mkilled\x1b[0m", "\x1b[33mrefused\x1b[0m", "\x1b[39mreported\x1b[0m", "\x1b[39msignal\x1b[0m"},
		"doctor":  {"\x1b[32mok    \x1b[0m", "\x1b[33mwarn  \x1b[0m", "\x1b[31mfail  \x1b[0m", "\x1b[39minfo  \x1b[0m"},
		"pty":     {"\x1b[31mDEAD\x1b[0m"},
	}
	for name, v := range styleViews() {
		var plain, color strings.Builder
		if err := v.WriteTable(&plain, Style{}); err != nil {
			t.Fatal(err)
		}
		if err := v.WriteTable(&color, Style{Color: true}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plain.String(), "\x1b") {
			t.Errorf("%s: an escape without colour:\n%q", name, plain.String())
		}
		if got := sgr.ReplaceAllString(color.String(), ""); got != plain.String() {
			t.Errorf("%s: coloured, less its escapes, is not the plain table:\n%s\nwant\n%s", name, got, plain.String())
		}
		for _, want := range painted[name] {
			if !strings.Contains(color.String(), want) {
				t.Errorf("%s: no %q in\n%q", name, want, color.String())
			}
		}
	}
}

// --no-headers leaves the rows: no title, no column headings, no sums.
func TestStyleNoHeaders(t *testing.T) {
	gone := map[string][]string{
		"report":  {"reaper reap · ", "COMMAND", "finding", "PTYs "},
		"history": {"TIME", "OUTCOME", "decisions"},
		"doctor":  {"reaper v1.2.0", "checks:"},
		"pty":     {"PTYs: 2 in use"},
	}
	kept := map[string][]string{
		"report":  {"pty-dead\tpty\tterminate\tkilled\t", "mcp\tmcp\tterminate\trefused\t"},
		"history": {"killed", "SIGTERM to 4242", "a-much-longer-rule-name"},
		"doctor":  {"ok    pidfd", "fail  lock"},
		"pty":     {"/dev/pts/7  DEAD"},
	}
	for name, v := range styleViews() {
		var full, rows strings.Builder
		v.WriteTable(&full, Style{})
		if err := v.WriteTable(&rows, Style{NoHeaders: true}); err != nil {
			t.Fatal(err)
		}
		for _, w := range gone[name] {
			if !strings.Contains(full.String(), w) {
				t.Errorf("%s: the control lacks %q:\n%s", name, w, full.String())
			}
			if strings.Contains(rows.String(), w) {
				t.Errorf("%s: --no-headers still has %q:\n%s", name, w, rows.String())
			}
		}
		for _, w := range kept[name] {
			if !strings.Contains(rows.String(), w) {
				t.Errorf("%s: --no-headers lost %q:\n%s", name, w, rows.String())
			}
		}
	}
	// History's rows alone: every line a record, so awk's fields hold.
	var rows strings.Builder
	styleViews()["history"].WriteTable(&rows, Style{NoHeaders: true})
	if lines := strings.Split(strings.TrimSuffix(rows.String(), "\n"), "\n"); len(lines) != 4 {
		t.Errorf("history --no-headers: %d lines, want the 4 records:\n%s", len(lines), rows.String())
	}
}

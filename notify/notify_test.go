package notify

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/orphanreaper/reaper/audit"
)

// desk records what it is asked to send.
type desk struct{ sent [][2]string }

func (d *desk) Send(summary, body string) error {
	d.sent = append(d.sent, [2]string{summary, body})
	return nil
}

func killed(pid int, owner, run string, mib uint64) audit.Finding {
	return audit.Finding{RootPID: pid, Start: "boot:1", Kind: "mcp", Owner: owner, RunID: run, Action: "terminate", Outcome: "killed",
		Ended: "SIGTERM", RSSBytes: mib << 20, Cmdline: "npm exec some-mcp", User: "ann"}
}

// One ended tree is one notification, saying what, whose and how much;
// the same tree in the next pass's report is not told again; an idle
// hour of passes (a pass a minute, nothing found) sends nothing.
func TestNotifierTellsOnce(t *testing.T) {
	d := &desk{}
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	n := &Notifier{Desktop: d, Above: DefaultAbove, Now: func() time.Time { return now }}
	rep := &audit.Report{Findings: []audit.Finding{killed(4321, "claude-code", "claude session s1", 300)}}
	if sent, err := n.Pass(rep); sent != 1 || err != nil {
		t.Fatalf("sent %d (%v), want 1", sent, err)
	}
	s := d.sent[0]
	if s[0] != "reaper ended 1 leftover tree (300.0 MiB)" || !strings.Contains(s[1], "claude-code claude session s1:") || !strings.Contains(s[1], "mcp 4321 (npm exec some-mcp), ann's, 300.0 MiB") {
		t.Errorf("notification %q", s)
	}
	for i := 0; i < 60; i++ {
		now = now.Add(time.Minute)
		reps := []*audit.Report{{}, rep} // an empty pass, and the same tree again
		if sent, _ := n.Pass(reps[i%2]); sent != 0 {
			t.Fatalf("minute %d: sent %d for nothing new: %q", i, sent, d.sent)
		}
	}
	if len(d.sent) != 1 || n.Pending() {
		t.Errorf("after an idle hour: %d sent, pending %v", len(d.sent), n.Pending())
	}
}

// Within MinGap of a notification, what is new waits and goes with the
// next pass after the gap, grouped by session; a report-only tree is told
// of above the size and never below it.
func TestNotifierGapAndGroups(t *testing.T) {
	d := &desk{}
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	n := &Notifier{Desktop: d, Above: 500 << 20, Now: func() time.Time { return now }}
	n.Pass(&audit.Report{Findings: []audit.Finding{killed(1, "codex", "", 10)}})
	now = now.Add(10 * time.Second)
	big := audit.Finding{RootPID: 7, Start: "boot:7", Kind: "exec", Action: "report", Outcome: "reported", RSSBytes: 600 << 20, Cmdline: "vite dev"}
	small := audit.Finding{RootPID: 8, Start: "boot:8", Kind: "exec", Action: "report", Outcome: "reported", RSSBytes: 20 << 20, Cmdline: "sleep"}
	if sent, _ := n.Pass(&audit.Report{Findings: []audit.Finding{killed(2, "claude-code", "claude session a", 20), killed(3, "claude-code", "claude session a", 30), big, small}}); sent != 0 || !n.Pending() {
		t.Fatalf("within the gap: sent %d, pending %v", sent, n.Pending())
	}
	now = now.Add(MinGap)
	if sent, _ := n.Pass(&audit.Report{}); sent != 1 {
		t.Fatalf("after the gap: sent %d, want the waiting ones in 1", sent)
	}
	s := d.sent[1]
	if s[0] != "reaper ended 2 leftover trees (50.0 MiB); found 1 large tree it only reports (600.0 MiB)" {
		t.Errorf("summary %q", s[0])
	}
	if strings.Count(s[1], "claude-code claude session a:") != 1 || !strings.Contains(s[1], "reaper explain 7") || strings.Contains(s[1], " 8 (sleep)") {
		t.Errorf("body %q: want session a once with its two trees, the large tree 7 and not the small 8", s[1])
	}
}

// Issue 51, attack 5c: D-Bus strings must be UTF-8, and a bus refuses
// the whole Notify when one is not. One of A's trees named with bytes
// that are not UTF-8 (0x9B, 0xFF), in its command line, user and owner,
// shares a batch with B's tree: the message is valid UTF-8, escapes A's
// bytes, and still tells of B's.
func TestNotifierSendsValidUTF8(t *testing.T) {
	d := &desk{}
	n := &Notifier{Desktop: d}
	hostile := killed(7, "claude\x9b2J", "run\xff", 10)
	hostile.Cmdline, hostile.User = "node \x9b31mserver\xfe", "a\xff"
	if _, err := n.Pass(&audit.Report{Findings: []audit.Finding{hostile, killed(8, "codex", "r2", 20)}}); err != nil {
		t.Fatal(err)
	}
	if len(d.sent) != 1 {
		t.Fatalf("%d notifications, want 1", len(d.sent))
	}
	summary, body := d.sent[0][0], d.sent[0][1]
	if !utf8.ValidString(summary) || !utf8.ValidString(body) {
		t.Errorf("not UTF-8: %q / %q", summary, body)
	}
	if !strings.Contains(body, `\x9b31mserver\xfe`) || !strings.Contains(body, "mcp 8 (npm exec some-mcp)") {
		t.Errorf("body %q: want A's bytes escaped and B's tree told", body)
	}
}

// A fork storm is told at once, whatever was told just before: its pid,
// its rate, whose — and a user's title in it is escaped.
func TestNotifierStorm(t *testing.T) {
	d := &desk{}
	n := &Notifier{Desktop: d, Above: DefaultAbove}
	n.Pass(&audit.Report{Findings: []audit.Finding{killed(4321, "claude-code", "claude session s1", 300)}})
	if err := n.Storm(audit.Storm{PID: 777, Comm: "node\x1b[2J", User: "ann", Rate: 120, For: 2 * time.Second, Threshold: 30, Seen: "fork events"}); err != nil {
		t.Fatal(err)
	}
	last := d.sent[len(d.sent)-1]
	if len(d.sent) != 2 || last[0] != "reaper: fork storm" || !strings.Contains(last[1], "pid 777") || !strings.Contains(last[1], "120 processes a second") ||
		!strings.Contains(last[1], "of ann") || strings.Contains(last[1], "\x1b") {
		t.Errorf("sent %q, want the storm told at once, in words, escaped", d.sent)
	}
}

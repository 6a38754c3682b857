package top

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
)

// An ended session's row says when its record says it started, not
// "up 0s" of a process that is gone; a live one's says how long it has
// run (the control).
func TestSessionTextEnded(t *testing.T) {
	ended := sessionText(audit.PSSession{Title: "Claude Code", PID: 7, State: "ended", StartedAt: "2026-11-28T16:00:00Z", AgeSeconds: 90}, false, audit.Style{})
	if !strings.Contains(ended, "started 1m30s ago") || strings.Contains(ended, "up ") {
		t.Errorf("ended: %q", ended)
	}
	unknown := sessionText(audit.PSSession{Title: "Claude Code", PID: 7, State: "ended"}, false, audit.Style{})
	if !strings.Contains(unknown, "its start not recorded") || strings.Contains(unknown, "up ") {
		t.Errorf("ended, no start recorded: %q", unknown)
	}
	live := sessionText(audit.PSSession{Title: "Claude Code", PID: 7, State: "live", AgeSeconds: 90}, false, audit.Style{})
	if !strings.Contains(live, "up 1m30s") {
		t.Errorf("live: %q", live)
	}
}

// top lists the copies of a server across live sessions under their own
// heading, and a user's warning past their process limit; a search keeps
// a copy's row that holds it (and drops one that does not).
func TestLayoutCopiesAndHeadroom(t *testing.T) {
	v := &audit.PSView{Copies: []audit.ServerCopies{{Command: "npx -y docs-mcp", Name: "docs", Copies: 3, Sessions: []int{1, 2, 3}, PIDs: []int{4, 5, 6}, MemoryBytes: 3 << 20}},
		Headroom: []audit.Headroom{{UID: 1000, User: "ann", Tasks: 900, ProcessLimit: 1000, Percent: 90, Warn: true}, {UID: 1001, User: "bob", Tasks: 9, ProcessLimit: 1000, Percent: 0}}}
	m := &Model{view: v}
	m.layout()
	var text []string
	for _, r := range m.rows {
		text = append(text, r.text)
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"copies across live sessions", `server "docs": 3 copies under 3 sessions`, "warning: user ann (uid 1000) is at 90%"} {
		if !strings.Contains(all, want) {
			t.Errorf("top's rows lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "bob") {
		t.Errorf("top warns of a user far from their limit:\n%s", all)
	}
	m.search = "nothing-like-it"
	m.layout()
	for _, r := range m.rows {
		if strings.Contains(r.text, "docs-mcp") {
			t.Errorf("a search for another text kept the copy's row %q", r.text)
		}
	}
}

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

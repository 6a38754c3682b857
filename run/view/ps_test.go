package view

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// A client's state is read from its terminal: the foreground group of
// its terminal is live, another group on it background, no terminal
// headless.
func TestSessionState(t *testing.T) {
	for _, tt := range []struct {
		p    platform.Process
		want string
	}{
		{platform.Process{PID: 10, PGID: 10, TTY: 0x8801, TPGID: 10}, "live"},
		{platform.Process{PID: 11, PGID: 11, TTY: 0x8801, TPGID: 10}, "background"},
		{platform.Process{PID: 12, PGID: 12, TTY: 0, TPGID: -1}, "headless"},
		{platform.Process{PID: 13, PGID: 13, TTY: 0x8801, TPGID: 0}, "live"}, // the platform does not say
	} {
		if got := state(&tt.p); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.p, got, tt.want)
		}
	}
}

// The advice for a server's copies is each client's own command for a
// server by URL, the server's name in it; a client with none is told so,
// and not to register what it cannot.
func TestCopiesAdvice(t *testing.T) {
	d := audit.ServerCopies{Name: "docs", Copies: 3, MemoryBytes: 3 << 20}
	got := copiesAdvice(d, map[string]string{"Claude Code": "`claude mcp add --transport http NAME URL`", "OpenClaw": ""})
	if !strings.Contains(got, "2.0 MiB extra") || !strings.Contains(got, "Claude Code: `claude mcp add --transport http docs URL`") || strings.Contains(got, "OpenClaw") {
		t.Errorf("advice %q", got)
	}
	got = copiesAdvice(d, map[string]string{"OpenClaw": ""})
	if strings.Contains(got, "register it over HTTP") || !strings.Contains(got, "no way for OpenClaw") {
		t.Errorf("advice without a way %q", got)
	}
}

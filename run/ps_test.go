package run

import (
	"testing"

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

package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/platform/host"
)

// Issue 64, item 13: on a host whose init is not systemd (a container),
// doctor's fix named cron and a reap every minute, not the watch that
// ends a leftover within a second. It names both, the watch first.
func TestScheduleWithoutSystemd(t *testing.T) {
	if host.SystemdBooted() {
		t.Skip("systemd is this host's init: the check asks it instead (TestSystemdCheck)")
	}
	c, _ := scheduleCheck(context.Background())
	if !strings.Contains(c.Fix, "reaper watch") || !strings.Contains(c.Fix, "cron") || strings.Index(c.Fix, "reaper watch") > strings.Index(c.Fix, "cron") {
		t.Errorf("no systemd: fix %q, want reaper watch named before cron", c.Fix)
	}
}

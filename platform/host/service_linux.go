package host

import (
	"context"
	"os"
	"strings"
)

func systemdBooted() bool {
	fi, err := os.Stat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// UnitProps asks systemd — the user's manager when user is set — for
// properties of unit, as `systemctl show --timestamp=unix` prints them
// (systemctl(1): "intended to be used whenever computer-parsable output
// is required"), within five seconds.
//
// It is the one place reaper runs another program, and only for `reaper
// doctor`: systemd keeps a unit's state behind D-Bus, and its client
// library would start with every run of reaper for one diagnosis. scan
// and reap never call it. systemctl is taken from /usr/bin or /bin, never
// from $PATH.
func UnitProps(ctx context.Context, user bool, unit string, props []string) (string, error) {
	args := []string{"show", "--timestamp=unix", "-p", strings.Join(props, ","), unit}
	if user {
		args = append([]string{"--user"}, args...)
	}
	return RunTool(ctx, "systemctl", args...)
}

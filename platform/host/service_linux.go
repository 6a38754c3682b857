package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// SystemdBooted reports whether systemd is this host's init (sd_booted(3):
// /run/systemd/system is a directory).
func SystemdBooted() bool {
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
	return runTool(ctx, "systemctl", args...)
}

// runTool runs name from /usr/bin or /bin with args, for at most five
// seconds, and returns its standard output.
func runTool(ctx context.Context, name string, args ...string) (string, error) {
	var path string
	for _, dir := range []string{"/usr/bin", "/bin"} {
		if unix.Access(dir+"/"+name, unix.X_OK) == nil {
			path = dir + "/" + name
			break
		}
	}
	if path == "" {
		return "", fmt.Errorf("%s is not in /usr/bin or /bin", name)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0"}
	if v, ok := os.LookupEnv("XDG_RUNTIME_DIR"); ok { // systemctl --user finds its manager there
		cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+v)
	}
	if v, ok := os.LookupEnv("DBUS_SESSION_BUS_ADDRESS"); ok {
		cmd.Env = append(cmd.Env, "DBUS_SESSION_BUS_ADDRESS="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), err)
	}
	return string(out), nil
}

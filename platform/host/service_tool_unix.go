//go:build unix

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

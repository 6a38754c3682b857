package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// LaunchdPrint asks launchd about a job (`launchctl print DOMAIN/LABEL`,
// launchctl(1)), within five seconds; found is false when launchd knows
// no such job.
//
// It is the one place reaper runs another program, and only for `reaper
// doctor`; scan and reap never call it. launchctl is taken from /bin.
func LaunchdPrint(ctx context.Context, target string) (out string, found bool) {
	const path = "/bin/launchctl"
	if _, err := os.Stat(path); err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "print", target)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	b, err := cmd.Output()
	if err != nil {
		return fmt.Sprint(err), false
	}
	return strings.TrimSpace(string(b)) + "\n", true
}

//go:build linux || freebsd

package host

import (
	"context"
	"os/exec"
	"time"
)

// NotifySend is the path of notify-send, "" where there is none.
func NotifySend() string {
	path, _ := exec.LookPath("notify-send")
	return path
}

// RunNotifySend shows one notification through notify-send at path,
// within 5 s.
func RunNotifySend(path, summary, body string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, path, "--app-name=reaper", "--", summary, body).Run()
}

package host

import (
	"context"
	"os/exec"
	"strconv"
	"time"
)

// Osascript is the path of osascript, "" where there is none.
func Osascript() string {
	path, _ := exec.LookPath("osascript")
	return path
}

// DisplayNotification shows one notification in Notification Center
// through osascript at path (`display notification BODY with title
// "reaper" subtitle SUMMARY`, every string quoted for AppleScript),
// within 5 s.
func DisplayNotification(path, summary, body string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	script := "display notification " + strconv.Quote(body) + " with title \"reaper\" subtitle " + strconv.Quote(summary)
	return exec.CommandContext(ctx, path, "-e", script).Run()
}

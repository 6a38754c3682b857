package notify

import (
	"context"
	"os/exec"
	"strconv"
	"time"
)

// Open is Notification Center through osascript, which every macOS has.
func Open(func(string) string) (Desktop, string) {
	path, err := exec.LookPath("osascript")
	if err != nil {
		return nil, "no osascript: notifications off"
	}
	return osascript(path), ""
}

type osascript string

// Send runs `display notification BODY with title "reaper" subtitle
// SUMMARY`, every string quoted for AppleScript.
func (o osascript) Send(summary, body string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	script := "display notification " + strconv.Quote(body) + " with title \"reaper\" subtitle " + strconv.Quote(summary)
	return exec.CommandContext(ctx, string(o), "-e", script).Run()
}

package notify

import "github.com/orphanreaper/reaper/platform/host"

// Open is Notification Center through osascript, which every macOS has.
func Open(func(string) string) (Desktop, string) {
	path := host.Osascript()
	if path == "" {
		return nil, "no osascript: notifications off"
	}
	return osascript(path), ""
}

type osascript string

// Send shows the notification (host.DisplayNotification).
func (o osascript) Send(summary, body string) error {
	return host.DisplayNotification(string(o), summary, body)
}

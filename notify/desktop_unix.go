//go:build linux || freebsd

package notify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/orphanreaper/reaper/platform/host"
)

// The freedesktop notification service (Desktop Notifications
// Specification 1.2): the well-known name, its object and method.
const (
	busName    = "org.freedesktop.Notifications"
	busPath    = "/org/freedesktop/Notifications"
	busNotify  = busName + ".Notify"
	sendWithin = 5 * time.Second
)

// Open finds the desktop of the session reaper runs in (getenv reads its
// environment): the session bus DBUS_SESSION_BUS_ADDRESS names, else
// $XDG_RUNTIME_DIR/bus (a systemd user manager's), when a notification
// service owns its name there; else notify-send on PATH. With neither, it
// returns nil and why.
func Open(getenv func(string) string) (Desktop, string) {
	addr := getenv("DBUS_SESSION_BUS_ADDRESS")
	if addr == "" {
		if dir := getenv("XDG_RUNTIME_DIR"); dir != "" {
			if st, err := os.Stat(filepath.Join(dir, "bus")); err == nil && st.Mode()&os.ModeSocket != 0 {
				addr = "unix:path=" + filepath.Join(dir, "bus")
			}
		}
	}
	var why error
	if addr != "" {
		d, err := dialBus(addr)
		if err == nil {
			return d, ""
		}
		why = err
	}
	if path := host.NotifySend(); path != "" {
		return notifySend(path), ""
	}
	if why == nil {
		why = errors.New("no session bus (DBUS_SESSION_BUS_ADDRESS, $XDG_RUNTIME_DIR/bus)")
	}
	return nil, fmt.Sprintf("no desktop to notify: %v, and no notify-send", why)
}

// bus is the notification service on a session bus.
type bus struct{ conn *dbus.Conn }

func dialBus(addr string) (*bus, error) {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, fmt.Errorf("session bus %s: %w", addr, err)
	}
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, busName).Store(&has); err != nil || !has {
		conn.Close()
		if err == nil {
			err = errors.New("no notification service on it")
		}
		return nil, fmt.Errorf("session bus %s: %w", addr, err)
	}
	return &bus{conn}, nil
}

// Send calls Notify: app "reaper", no icon, no actions, the server's
// default timeout.
func (b *bus) Send(summary, body string) error {
	// D-Bus strings must be UTF-8, and a bus refuses the whole call when
	// one is not: what the notifier built is (audit.Printable), and this
	// keeps any other caller's message from being dropped whole.
	summary, body = strings.ToValidUTF8(summary, "\uFFFD"), strings.ToValidUTF8(body, "\uFFFD")
	ctx, cancel := context.WithTimeout(context.Background(), sendWithin)
	defer cancel()
	call := b.conn.Object(busName, busPath).CallWithContext(ctx, busNotify, 0,
		"reaper", uint32(0), "", summary, body, []string{}, map[string]dbus.Variant{}, int32(-1))
	return call.Err
}

// notifySend is the notify-send command.
type notifySend string

func (n notifySend) Send(summary, body string) error {
	return host.RunNotifySend(string(n), summary, body)
}

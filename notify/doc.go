// Package notify tells the desktop user what their watch did, only when
// they need to know: it ended something (what, whose, how much memory),
// or it found a large tree it only reports. Each pass's report
// (audit.Report) is read by a Notifier, which groups what it says by
// session, sends at most one notification per MinGap (what comes sooner
// waits and is sent together), never tells of the same tree twice, and
// says nothing when nothing happened.
//
// A Desktop sends one notification: on Linux and FreeBSD through the
// freedesktop notification service on the session bus
// (org.freedesktop.Notifications, over D-Bus with godbus), or notify-send
// where no bus answers; on macOS through Notification Center (osascript).
// A host with no session bus and no notify-send — a server, a container —
// has no Desktop: Open says why, and the watch never tries.
package notify

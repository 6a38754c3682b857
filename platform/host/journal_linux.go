package host

import (
	"github.com/coreos/go-systemd/v22/journal"
)

// JournalEnabled reports whether journald is listening on this host (its
// native socket exists). go-systemd's journal package speaks the native
// protocol over that socket without cgo.
func JournalEnabled() bool { return journal.Enabled() }

// JournalSend writes one structured record to journald. Field names are
// upper-case letters, digits and underscores (systemd.journal-fields(7)).
func JournalSend(message string, priority int, fields map[string]string) error {
	return journal.Send(message, journal.Priority(priority), fields)
}

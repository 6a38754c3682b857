package host

import (
	"github.com/coreos/go-systemd/v22/journal"
)

func journalEnabled() bool { return journal.Enabled() }

func journalSend(message string, priority int, fields map[string]string) error {
	return journal.Send(message, journal.Priority(priority), fields)
}

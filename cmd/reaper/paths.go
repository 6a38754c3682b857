package main

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/run"
)

// systemAuditLog is where the system units (packaging/systemd) write.
const systemAuditLog = "/var/log/reaper/audit.jsonl"

// userAuditLog is a user's audit log: where the user units write
// (systemd's %L, $XDG_STATE_HOME/log) and, on macOS, in ~/Library/Logs.
// It is "" when no home is known.
func userAuditLog() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Logs", "reaper", "audit.jsonl")
	}
	state := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "log", "reaper", "audit.jsonl")
}

// defaultAuditLog is the audit log history reads when none is named: the
// system units' as root, the user's own otherwise.
func defaultAuditLog() string {
	if run.EUID() == 0 {
		return systemAuditLog
	}
	if p := userAuditLog(); p != "" {
		return p
	}
	return systemAuditLog
}

// auditLogDefaultNote is the --audit-log flag's word on its default, for
// reap and watch: none as root (the units name one), the user's own
// otherwise — said, not computed, so that the help reads the same for all.
const auditLogDefaultNote = " (default: none as root; a user's ~/.local/state/log/reaper/audit.jsonl, ~/Library/Logs/reaper/audit.jsonl on macOS)"

// userAuditLogDefault gives a reap or watch that is not root the user's
// audit log when --audit-log was not given: history reads it by default,
// and the user units write there too. Where its directory cannot be made
// (a home that is not writable), the run keeps no log rather than fail:
// the user asked for none.
func userAuditLogDefault(cmd *cobra.Command, path *string) {
	if run.EUID() == 0 || cmd.Flags().Changed("audit-log") {
		return
	}
	if p := userAuditLog(); p != "" && os.MkdirAll(filepath.Dir(p), 0o700) == nil {
		*path = p
	}
}

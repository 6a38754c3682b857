package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/run"
)

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
	if p := run.UserAuditLog(); p != "" && os.MkdirAll(filepath.Dir(p), 0o700) == nil {
		*path = p
	}
}

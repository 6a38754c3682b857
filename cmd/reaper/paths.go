package main

import (
	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/run"
)

// auditLogDefaultNote is the --audit-log flag's word on its default, for
// reap and watch: none as root (the units name one), the user's own
// otherwise — said, not computed, so that the help reads the same for all.
var auditLogDefaultNote = " (default: none as root; a user's " + paths.Said("linux").UserAuditLog + ", " + paths.Said("darwin").UserAuditLog + " on macOS)"

// userAuditLogDefault gives a reap or watch that is not root the user's
// audit log when --audit-log was not given: history reads it by default,
// and the user units write there too. Where it cannot be written (a home
// that is not writable) the run still names it: a reap then signals
// nothing, saying why, for nothing it does may go unrecorded; a dry run
// says the log was not written.
func userAuditLogDefault(cmd *cobra.Command, path *string) {
	if run.EUID() == 0 || cmd.Flags().Changed("audit-log") {
		return
	}
	if p := paths.Current().UserAuditLog; p != "" {
		*path = p
	}
}

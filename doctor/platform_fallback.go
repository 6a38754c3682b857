//go:build !linux && !darwin

package doctor

import (
	"context"
	"runtime"

	"github.com/orphanreaper/reaper/audit"
)

// platformChecks: reaper knows no more of this platform than its process
// table.
func platformChecks() []audit.Check { return nil }

func scheduleCheck(ctx context.Context) (audit.Check, []string) {
	return audit.Check{Name: "timer", Status: audit.CheckInfo,
		Summary: "doctor does not know how " + runtime.GOOS + " runs services: run 'reaper watch --quiet' under its service manager, or 'reaper reap --quiet' every minute from cron"}, nil
}

func journalCheck() audit.Check {
	return audit.Check{Name: "journal", Status: audit.CheckInfo,
		Summary: "no journald here: the audit log (--audit-log) is the record of what reap did"}
}

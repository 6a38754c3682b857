//go:build !linux && !darwin

package doctor

import (
	"context"
	"runtime"

	"github.com/orphanreaper/reaper/audit"
)

// platformChecks: reaper knows no more of this platform than its process
// table; on Windows it says once what stands there for the facilities the
// Unix checks look at.
func platformChecks() []audit.Check {
	if runtime.GOOS != "windows" {
		return nil
	}
	return []audit.Check{{Name: "windows", Status: audit.CheckInfo,
		Summary: "Windows has no pidfds, cgroups, /proc or signals: each act goes through a process handle checked against the creation time the scan saw, a tree is held by a job object of its own, and terminate and kill both end a process (TerminateProcess)",
		Details: []string{"an orphan is a process whose recorded parent is gone or younger than itself (Windows never reparents)",
			"only this user's clients' records are read: another user's leftovers are untracked, never owner-dead"}}, watchAbility()}
}

func scheduleCheck(ctx context.Context) (audit.Check, []string) {
	if runtime.GOOS == "windows" {
		return audit.Check{Name: "timer", Status: audit.CheckInfo,
			Summary: "reaper has no service or scheduled task of its own on Windows yet: start 'reaper.exe watch --quiet' at logon (a task of Task Scheduler's), or run 'reaper reap --quiet' every minute (schtasks /create /tn reaper /sc minute /tr \"reaper.exe reap --quiet\")"}, nil
	}
	return audit.Check{Name: "timer", Status: audit.CheckInfo,
		Summary: "doctor does not know how " + runtime.GOOS + " runs services: run 'reaper watch --quiet' under its service manager, or 'reaper reap --quiet' every minute from cron"}, nil
}

func journalCheck() audit.Check {
	return audit.Check{Name: "journal", Status: audit.CheckInfo,
		Summary: "no journald here: the audit log (--audit-log) is the record of what reap did"}
}

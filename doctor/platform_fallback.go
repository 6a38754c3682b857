//go:build !linux && !darwin

package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/setup"
)

// platformChecks: reaper knows no more of this platform than its process
// table; on Windows it says once what stands there for the facilities the
// Unix checks look at.
func platformChecks() []audit.Check {
	if runtime.GOOS != "windows" {
		return nil
	}
	return []audit.Check{watchAbility(), {Name: "windows", Status: audit.CheckInfo,
		Summary: "Windows has no pidfds, cgroups, /proc or signals: each act goes through a process handle checked against the creation time the scan saw, a tree is held by a job object of its own, and terminate and kill both end a process (TerminateProcess)",
		Details: []string{"an orphan is a process whose recorded parent is gone or younger than itself (Windows never reparents)",
			"only this user's clients' records are read: another user's leftovers are untracked, never owner-dead"}}}
}

func scheduleCheck(ctx context.Context) (audit.Check, []string) {
	if runtime.GOOS == "windows" {
		return windowsTask(), nil
	}
	return audit.Check{Name: "timer", Status: audit.CheckInfo,
		Summary: "doctor does not know how " + runtime.GOOS + " runs services: run 'reaper watch --quiet' under its service manager, or 'reaper reap --quiet' every minute from cron"}, nil
}

// windowsTask says whether this user's logon task is there: the XML
// `reaper service install --user` registered it from, with reaper's mark.
// Whether Task Scheduler still holds it is not asked (schtasks /Query).
func windowsTask() audit.Check {
	c := audit.Check{Name: "timer", Status: audit.CheckInfo}
	xml := filepath.Join(filepath.Dir(paths.Current().Lock), setup.TaskName+".xml")
	if b, err := os.ReadFile(xml); err == nil && setup.HasMark(b) {
		c.Summary = "this user's logon task " + setup.TaskName + " starts reaper watch at logon (registered from " + xml + "; 'reaper service uninstall --user' removes it)"
		return c
	}
	c.Summary = "nothing runs reaper by itself here: 'reaper service install --user' (or 'reaper init') registers a logon task that runs reaper watch; or run 'reaper reap --quiet' when you want"
	return c
}

func journalCheck() audit.Check {
	return audit.Check{Name: "journal", Status: audit.CheckInfo,
		Summary: "no journald here: the audit log (--audit-log) is the record of what reap did"}
}

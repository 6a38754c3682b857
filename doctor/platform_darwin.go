package doctor

import (
	"context"
	"fmt"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

// platformChecks are macOS's: it has neither pidfds nor cgroups.
func platformChecks() []audit.Check {
	c := []audit.Check{{Name: "pidfd", Status: audit.CheckInfo,
		Summary: "macOS has no pidfds: each kill(2) is by pid, after the start time is read again; min_age guards the rest"}, watchAbility()}
	if run.EUID() == 0 {
		c = append(c, audit.Check{Name: "privileges", Status: audit.CheckOK, Summary: "root: every user's processes and state are in reach"})
	} else {
		c = append(c, audit.Check{Name: "privileges", Status: audit.CheckInfo,
			Summary: fmt.Sprintf("not root: this reaper acts only on uid %d's processes and reads only its own state", run.EUID())})
	}
	return c
}

// scheduleCheck asks launchd about reaper's job: the shipped watching
// daemon, else the shipped daemon, as root; the shipped watching agent,
// else the shipped agent, else Homebrew's service, otherwise.
func scheduleCheck(ctx context.Context) (audit.Check, []string) {
	user, domain := run.EUID() != 0, "system/"
	if user {
		domain = fmt.Sprintf("gui/%d/", run.EUID())
	}
	var targets []string
	for _, label := range setup.Labels(user) {
		targets = append(targets, domain+label)
	}
	for _, target := range targets {
		if out, found := host.LaunchdPrint(ctx, target); found {
			return launchdCheck(target, true, out), launchdArgs(out)
		}
	}
	return launchdCheck(targets[0], false, ""), nil
}

func journalCheck() audit.Check {
	return audit.Check{Name: "journal", Status: audit.CheckInfo,
		Summary: "macOS has no journald: the audit log (--audit-log) is the record of what reap did"}
}

package doctor

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

// platformChecks are Linux's: pidfds, what a watch can watch, cgroup v2,
// and root's capabilities.
func platformChecks() []audit.Check {
	return []audit.Check{pidfdCheck(), watchAbility(), cgroupCheck(), privilegeCheck()}
}

func pidfdCheck() audit.Check {
	c := audit.Check{Name: "pidfd"}
	pidfd, pidfs := kill.PidfdSupported()
	if !pidfd {
		c.Status = audit.CheckWarn
		c.Summary = "no pidfds (Linux before 5.3): each kill(2) is by pid, after the start time is read again; min_age guards the rest"
		c.Fix = "a kernel of 5.3 or later closes the pid-reuse window"
		return c
	}
	c.Status = audit.CheckOK
	c.Summary = "every signal goes through a pidfd (pidfd_open, pidfd_send_signal)"
	if pidfs {
		c.Details = []string{"pidfs (Linux 6.9+): a pidfd's inode names one process for the life of the boot"}
	}
	return c
}

// cgroupCheck finds out whether a dying tree can be killed as a unit the
// way reap does it: by making an empty confinement, with cgroup.kill, and
// removing it again. It names the confinements that outlived their reap
// (their maker SIGKILLed, or its PID namespace ended under it).
func cgroupCheck() audit.Check {
	c := audit.Check{Name: "cgroup v2"}
	root := kill.Cgroup2Root()
	switch {
	case run.EUID() != 0:
		c.Status = audit.CheckInfo
		c.Summary = "needs root: a user's reaper follows a dying tree by its sessions and process groups"
		return c
	case root == "":
		c.Status = audit.CheckWarn
		c.Summary = "no cgroup v2 hierarchy: a dying tree is followed by its sessions and process groups, and a child that calls setsid as it dies can escape"
		c.Fix = "boot with the unified hierarchy (systemd.unified_cgroup_hierarchy=1), or mount cgroup2"
		return c
	}
	conf, err := kill.NewGuard(nil).Confine("doctor-" + strconv.Itoa(os.Getpid()))
	if err != nil {
		c.Status = audit.CheckWarn
		c.Summary = "a dying tree cannot be killed as a unit here: it is followed by its sessions and process groups"
		c.Details = []string{err.Error(), "mounted at " + root}
		c.Fix = "the timer's unit needs Delegate=yes and ProtectControlGroups=no (the shipped one has both); by hand, reaper's own cgroup must be writable"
		return c
	}
	removed := conf.Remove()
	c.Status = audit.CheckOK
	c.Summary = "a dying tree is moved into a cgroup of its own and killed as a unit (cgroup.kill)"
	c.Details = []string{fmt.Sprintf("made and removed %s%s to find out", root, conf.Path)}
	if !removed {
		c.Details = append(c.Details, "it could not be removed again: remove it by hand (rmdir)")
	}
	left, err := kill.Confinements(time.Now())
	if err != nil {
		c.Details = append(c.Details, "confinements left by reapers that died: "+err.Error())
	}
	var empty, busy int
	for _, l := range left {
		what := "empty"
		if l.Populated {
			what, busy = "holds processes", busy+1
		} else {
			empty++
		}
		c.Details = append(c.Details, fmt.Sprintf("%s%s, made %s, %s", root, l.Path, l.Made.Format(time.DateTime), what))
	}
	switch {
	case busy > 0:
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%d confinements that reapers which died left hold processes", busy)
		c.Fix = "the next reap that takes the dead reaper's lock gives them back (its record of what is stopped); 'reaper explain PID' for each"
	case empty > 0:
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%d empty confinements that reapers which died left", empty)
		c.Fix = "the next reap as root removes the empty ones (rmdir by hand does too)"
	}
	return c
}

// The capabilities a root reaper uses (capabilities(7); the unit's
// CapabilityBoundingSet): bit, name, and what for.
var rootCaps = []struct {
	bit  uint
	name string
	use  string
}{
	{5, "CAP_KILL", "signal other users' processes"},
	{19, "CAP_SYS_PTRACE", "read their environ and fd links"},
	{2, "CAP_DAC_READ_SEARCH", "list their homes"},
	{7, "CAP_SETUID", "read each user's state as that user"},
	{6, "CAP_SETGID", "read each user's state as that user"},
}

func privilegeCheck() audit.Check {
	c := audit.Check{Name: "privileges"}
	if run.EUID() != 0 {
		c.Status = audit.CheckInfo
		c.Summary = fmt.Sprintf("not root: this reaper acts only on uid %d's processes and reads only its own state", run.EUID())
		return c
	}
	eff, err := host.EffectiveCaps()
	if err != nil {
		c.Status = audit.CheckWarn
		c.Summary = "root, but its capabilities could not be read: " + err.Error()
		return c
	}
	var missing []string
	for _, cp := range rootCaps {
		if eff&(1<<cp.bit) == 0 {
			missing = append(missing, fmt.Sprintf("%s (to %s)", cp.name, cp.use))
		}
	}
	if len(missing) > 0 {
		c.Status = audit.CheckWarn
		c.Summary = "root without " + strings.Join(missing, ", ")
		c.Fix = "a container may drop them: give it these capabilities, or run reaper on the host"
		return c
	}
	c.Status = audit.CheckOK
	c.Summary = "root, with the capabilities reap uses (CAP_KILL, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SETUID, CAP_SETGID)"
	return c
}

// scheduleCheck asks systemd about reaper-watch.service, and when it is
// not in use about reaper.timer and reaper.service — the system's as
// root, the user's otherwise — and returns the command line of the
// service that runs reaper.
func scheduleCheck(ctx context.Context) (audit.Check, []string) {
	if !host.SystemdBooted() {
		return audit.Check{Name: "timer", Status: audit.CheckWarn,
			Summary: "systemd is not this host's init: neither " + setup.WatchUnit + " nor " + setup.TimerUnit + " runs reaper",
			Fix:     "run 'reaper watch --quiet' under this host's supervisor, or 'reaper run' as a container's init; else 'reaper reap --quiet' every minute from cron"}, nil
	}
	user := run.EUID() != 0
	watch, err := host.UnitProps(ctx, user, setup.WatchUnit, []string{"LoadState", "UnitFileState", "ActiveState", "SubState", "Result", "StatusText", "NRestarts", "ExecStart"})
	if err != nil {
		return audit.Check{Name: "timer", Status: audit.CheckWarn, Summary: "systemd could not be asked: " + err.Error()}, nil
	}
	if wp := parseProps(watch); watchInUse(wp) {
		return watchCheck(user, wp), execArgv(wp["ExecStart"])
	}
	timer, err := host.UnitProps(ctx, user, setup.TimerUnit, []string{"LoadState", "UnitFileState", "ActiveState", "LastTriggerUSec"})
	if err != nil {
		return audit.Check{Name: "timer", Status: audit.CheckWarn, Summary: "systemd could not be asked: " + err.Error()}, nil
	}
	service, err := host.UnitProps(ctx, user, setup.ReapUnit, []string{"LoadState", "Result", "ExecMainStatus", "ExecMainExitTimestamp", "ExecStart"})
	if err != nil {
		return audit.Check{Name: "timer", Status: audit.CheckWarn, Summary: "systemd could not be asked: " + err.Error()}, nil
	}
	sp := parseProps(service)
	return systemdCheck(user, parseProps(timer), sp, time.Now()), execArgv(sp["ExecStart"])
}

func journalCheck() audit.Check {
	if host.JournalEnabled() {
		return audit.Check{Name: "journal", Status: audit.CheckOK,
			Summary: "journald is listening: reap records each decision there ('journalctl -t reaper')"}
	}
	return audit.Check{Name: "journal", Status: audit.CheckInfo,
		Summary: "no journald here: the audit log (--audit-log) is the only record of what reap did"}
}

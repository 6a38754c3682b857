package doctor

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/setup"
)

// This file judges how the host runs reaper on its own — a systemd timer
// or a launchd job — from what systemctl and launchctl print. It is pure,
// so that the judgement is tested on any platform; doctor_linux.go and
// doctor_darwin.go run the commands.

// parseProps reads `systemctl show` output: one Key=Value per line.
func parseProps(out string) map[string]string {
	props := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			props[k] = v
		}
	}
	return props
}

// systemdTime reads a timestamp of `systemctl show --timestamp=unix`
// ("@1764000000"); ok is false for "", "n/a" and "0" (never).
func systemdTime(v string) (time.Time, bool) {
	sec, err := strconv.ParseInt(strings.TrimPrefix(v, "@"), 10, 64)
	if !strings.HasPrefix(v, "@") || err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// execArgv is the command line of a unit's ExecStart property:
// "{ path=/usr/bin/reaper ; argv[]=/usr/bin/reaper reap --quiet ; … }".
func execArgv(execStart string) []string {
	_, rest, ok := strings.Cut(execStart, "argv[]=")
	if !ok {
		return nil
	}
	argv, _, _ := strings.Cut(rest, " ;")
	return strings.Fields(argv)
}

// flagValue is the value of --name in argv ("--name V" or "--name=V").
func flagValue(argv []string, name string) string {
	for i, a := range argv {
		if a == "--"+name && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// systemdCheck judges reaper.timer and the reaper.service it starts, of
// the system manager (user false) or the user's (true), from their
// properties.
func systemdCheck(user bool, timer, service map[string]string, now time.Time) audit.Check {
	c := audit.Check{Name: "timer", Status: audit.CheckOK}
	ctl, install := "systemctl", "sudo reaper service install"
	if user {
		ctl, install = "systemctl --user", "reaper service install --user"
	}
	switch {
	case timer["LoadState"] != "loaded":
		c.Status = audit.CheckWarn
		c.Summary = setup.TimerUnit + " is not installed: nothing runs reaper on its own"
		c.Fix = fmt.Sprintf("'%s' writes and starts %s for this binary ('--timer' for %s); the .deb and .rpm ship both", install, setup.WatchUnit, setup.TimerUnit)
		return c
	case timer["UnitFileState"] != "enabled":
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%s is installed but %s: it does not start at boot", setup.TimerUnit, orNA(timer["UnitFileState"]))
		c.Fix = fmt.Sprintf("'%s enable --now %s'", ctl, setup.TimerUnit)
	case timer["ActiveState"] != "active":
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%s is enabled but %s: it starts at the next boot", setup.TimerUnit, orNA(timer["ActiveState"]))
		c.Fix = fmt.Sprintf("'%s start %s'", ctl, setup.TimerUnit)
	default:
		c.Summary = setup.TimerUnit + " is enabled and active"
	}
	if argv := execArgv(service["ExecStart"]); len(argv) > 0 {
		c.Details = append(c.Details, "runs: "+strings.Join(argv, " "))
	}
	exited, ran := systemdTime(service["ExecMainExitTimestamp"])
	if !ran {
		if t, ok := systemdTime(timer["LastTriggerUSec"]); ok {
			c.Details = append(c.Details, fmt.Sprintf("last started %s ago; no exit recorded yet", audit.HumanAge(now.Sub(t))))
		} else {
			c.Details = append(c.Details, setup.ReapUnit+" has not run since boot")
		}
		return c
	}
	status, _ := strconv.Atoi(service["ExecMainStatus"])
	ago := audit.HumanAge(now.Sub(exited))
	result := service["Result"]
	switch {
	case result == "success" || result == "":
		c.Details = append(c.Details, fmt.Sprintf("last run ended %s ago: exit %d (%s)", ago, status, audit.ExitMeaning(status)))
		return c
	case result == "exit-code":
		c.Details = append(c.Details, fmt.Sprintf("last run ended %s ago: exit %d (%s)", ago, status, audit.ExitMeaning(status)))
	default: // signal, timeout, core-dump, oom-kill, …
		c.Details = append(c.Details, fmt.Sprintf("last run ended %s ago: %s", ago, result))
	}
	if result == "exit-code" && status == audit.ExitPartial {
		c.Status = audit.CheckWarn // the reaper works; one tree was not dealt with
	} else {
		c.Status = audit.CheckFail
	}
	journal := "journalctl -u " + setup.ReapUnit + " -n 50"
	if user {
		journal = "journalctl --user -u " + setup.ReapUnit + " -n 50"
	}
	c.Fix = joinFix(c.Fix, "'"+journal+"' shows the last run's errors")
	return c
}

// launchdArgs is the job's command line in `launchctl print` output: the
// lines of its "arguments = {" block.
func launchdArgs(out string) []string {
	var args []string
	inArgs := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case inArgs && line == "}":
			return args
		case inArgs:
			args = append(args, line)
		case line == "arguments = {":
			inArgs = true
		}
	}
	return args
}

// launchdCheck judges a launchd job from `launchctl print DOMAIN/LABEL`:
// out is its output, found false when launchctl knows no such job.
func launchdCheck(target string, found bool, out string) audit.Check {
	c := audit.Check{Name: "timer", Status: audit.CheckOK}
	if !found {
		c.Status = audit.CheckWarn
		c.Summary = "no launchd job runs reaper (" + target + " is not loaded)"
		c.Fix = "'reaper service install' (as root: a LaunchDaemon; else --user, a LaunchAgent) writes and loads the plist for this binary; or 'brew services start reaper'"
		return c
	}
	c.Summary = "launchd job " + target + " is loaded"
	props := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " = "); ok {
			if _, dup := props[k]; !dup { // the job's own, before any nested block's
				props[k] = v
			}
		}
	}
	if args := launchdArgs(out); len(args) > 0 {
		c.Details = append(c.Details, "runs: "+strings.Join(args, " "))
	}
	runs := props["runs"]
	code, err := strconv.Atoi(props["last exit code"])
	switch {
	case runs == "" || runs == "0":
		c.Details = append(c.Details, "it has not run since it was loaded")
	case err != nil:
		c.Details = append(c.Details, fmt.Sprintf("%s runs; last exit: %s", runs, orNA(props["last exit code"])))
	default:
		c.Details = append(c.Details, fmt.Sprintf("%s runs; last exit %d (%s)", runs, code, audit.ExitMeaning(code)))
		switch code {
		case audit.ExitOK:
		case audit.ExitPartial:
			c.Status = audit.CheckWarn
		default:
			c.Status = audit.CheckFail
		}
		if code != audit.ExitOK {
			c.Fix = "the job's StandardErrorPath (" + paths.SystemLogDir + "/reaper.err" + " for the shipped daemon) has the last run's errors"
		}
	}
	return c
}

func joinFix(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; then " + b
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// watchInUse says whether reaper-watch.service, from its properties, is
// how this host runs reaper: enabled, or running.
func watchInUse(watch map[string]string) bool {
	return watch["LoadState"] == "loaded" && (watch["UnitFileState"] == "enabled" || watch["ActiveState"] == "active")
}

// watchCheck judges reaper-watch.service, of the system manager (user
// false) or the user's (true), from its properties: running and ready
// (its STATUS= line shown), or why not. Named "timer" as the check of
// what runs reaper on its own, so that scripts find one check either way.
func watchCheck(user bool, watch map[string]string) audit.Check {
	c := audit.Check{Name: "timer", Status: audit.CheckOK}
	ctl, journal := "systemctl", "journalctl -u "+setup.WatchUnit+" -n 50"
	if user {
		ctl, journal = "systemctl --user", "journalctl --user -u "+setup.WatchUnit+" -n 50"
	}
	switch {
	case watch["ActiveState"] == "active" && watch["SubState"] == "running":
		c.Summary = setup.WatchUnit + " is running: a pass follows an owner's exit"
	case watch["ActiveState"] == "activating" || watch["ActiveState"] == "reloading":
		c.Status = audit.CheckInfo
		c.Summary = fmt.Sprintf("%s is %s: its first pass has not ended", setup.WatchUnit, watch["ActiveState"])
	case watch["ActiveState"] == "failed":
		c.Status = audit.CheckFail
		c.Summary = fmt.Sprintf("%s failed (%s): nothing runs reaper on its own", setup.WatchUnit, orNA(watch["Result"]))
		c.Fix = "'" + journal + "' shows why; then '" + ctl + " restart " + setup.WatchUnit + "'"
	default:
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%s is enabled but %s: it starts at the next boot", setup.WatchUnit, orNA(watch["ActiveState"]))
		c.Fix = "'" + ctl + " start " + setup.WatchUnit + "'"
	}
	if s := watch["StatusText"]; s != "" {
		c.Details = append(c.Details, "status: "+audit.Printable(s))
	}
	if n := watch["NRestarts"]; n != "" && n != "0" {
		c.Details = append(c.Details, "restarted "+n+" times since it was started: '"+journal+"'")
	}
	if argv := execArgv(watch["ExecStart"]); len(argv) > 0 {
		c.Details = append(c.Details, "runs: "+strings.Join(argv, " "))
	}
	return c
}

package setup

import "path/filepath"

// The services reaper installs, by the names the service managers know
// them by: what `reaper service install` writes and `reaper doctor` asks
// about. The packages (packaging/) ship the same files.
const (
	// WatchUnit runs `reaper watch`: the service.
	WatchUnit = "reaper-watch.service"
	// ReapUnit runs one `reaper reap`, started by TimerUnit every minute.
	ReapUnit  = "reaper.service"
	TimerUnit = "reaper.timer"
	// WatchLabel and TimerLabel are launchd's labels of the same two; a
	// user's LaunchAgent adds AgentSuffix.
	WatchLabel  = "dev.orphanreaper.reaper-watch"
	TimerLabel  = "dev.orphanreaper.reaper"
	AgentSuffix = ".agent"
	// BrewLabel is the LaunchAgent `brew services start reaper` loads.
	BrewLabel = "homebrew.mxcl.reaper"
	// SystemUnitDir and DaemonDir are where a system service's files go.
	SystemUnitDir = "/etc/systemd/system"
	DaemonDir     = "/Library/LaunchDaemons"
)

// Mark begins every file `reaper service install` writes (after a plist's
// XML declaration): uninstall removes only files that carry it.
const Mark = "Written by `reaper service install`"

// Label is the launchd label of the watch (timer false) or the timer, the
// system's or the user's.
func Label(timer, user bool) string {
	l := WatchLabel
	if timer {
		l = TimerLabel
	}
	if user {
		l += AgentSuffix
	}
	return l
}

// Labels are the launchd labels doctor looks for, in the order it asks:
// the user's list adds Homebrew's.
func Labels(user bool) []string {
	out := []string{Label(false, user), Label(true, user)}
	if user {
		out = append(out, BrewLabel)
	}
	return out
}

// UserUnitDir is where a user's systemd units go: $XDG_CONFIG_HOME (when
// absolute) or ~/.config, then systemd/user.
func UserUnitDir(xdgConfig, home string) string {
	if !filepath.IsAbs(xdgConfig) {
		xdgConfig = filepath.Join(home, ".config")
	}
	return filepath.Join(xdgConfig, "systemd", "user")
}

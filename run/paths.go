package run

import (
	"os"
	"path/filepath"
	"runtime"
)

// SystemAuditLog is where the system units (packaging/systemd) write.
const SystemAuditLog = "/var/log/reaper/audit.jsonl"

// UserAuditLog is a user's audit log: where the user units write
// (systemd's %L, $XDG_STATE_HOME/log) and, on macOS, in ~/Library/Logs.
// It is "" when no home is known.
func UserAuditLog() string {
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

// DefaultAuditLog is the audit log history reads when none is named: the
// system units' as root, the user's own otherwise.
func DefaultAuditLog() string {
	if EUID() == 0 {
		return SystemAuditLog
	}
	if p := UserAuditLog(); p != "" {
		return p
	}
	return SystemAuditLog
}

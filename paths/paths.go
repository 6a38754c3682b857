package paths

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Where a root reaper keeps its files, and the system units name.
const (
	SystemPolicy   = "/etc/reaper/policy.toml"
	SystemLock     = "/run/reaper.lock"
	SystemLogDir   = "/var/log/reaper"
	SystemAuditLog = SystemLogDir + "/audit.jsonl"
)

// Paths are the files of one user's reaper on this host.
type Paths struct {
	// Lock is the one-reaper-at-a-time lock: in /run for root, in
	// $XDG_RUNTIME_DIR otherwise (a directory only its user can write,
	// runtime-dir(7)), else in the user's cache dir. Never in a directory
	// every user can write, such as /tmp: another user who made the file
	// first would hold the lock, or own the file, and stop this user's
	// reaper on every run. What a reaper keeps beside it (Beside) moves
	// with it when --lock-file names another.
	Lock string
	// Policy is read when no policy is named: /etc/reaper/policy.toml for
	// root, else $XDG_CONFIG_HOME/reaper/policy.toml (~/.config when
	// unset); "" when no home is known.
	Policy string
	// LogDir is where the service's output goes (launchd's
	// StandardOutPath): /var/log/reaper for root; a user's
	// $XDG_STATE_HOME/log/reaper (systemd's %L), ~/Library/Logs/reaper on
	// macOS; "" when no home is known.
	LogDir string
	// UserAuditLog is the user's own audit log, in LogDir ("" as root, or
	// with no home): a user's reap and watch write it by default, and the
	// user units too.
	UserAuditLog string
	// AuditLog is the audit log history reads when none is named: the
	// system units' as root, the user's own otherwise.
	AuditLog string

	home string // a user's home, written ~ (Text); "" as root
}

// Env is what Paths are made of.
type Env struct {
	EUID   uint32
	GOOS   string
	Home   string // "" when none is known
	Getenv func(string) string
	// CacheDir and TempDir are the user's cache dir ("" when none) and
	// the temp dir, for a lock with no runtime dir.
	CacheDir, TempDir string
}

// Current is this process's Paths.
func Current() Paths {
	home, _ := os.UserHomeDir()
	cache, _ := os.UserCacheDir()
	return New(Env{EUID: uint32(os.Geteuid()), GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv, CacheDir: cache, TempDir: os.TempDir()})
}

// New makes the Paths of e.
func New(e Env) Paths {
	if e.EUID == 0 {
		return Paths{Lock: SystemLock, Policy: SystemPolicy, LogDir: SystemLogDir, AuditLog: SystemAuditLog}
	}
	p := Paths{Lock: filepath.Join(e.TempDir, "reaper-"+strconv.FormatUint(uint64(e.EUID), 10)+".lock")} // refused by the lock if another user's
	switch {
	case e.Getenv("XDG_RUNTIME_DIR") != "":
		p.Lock = filepath.Join(e.Getenv("XDG_RUNTIME_DIR"), "reaper.lock")
	case e.CacheDir != "":
		p.Lock = filepath.Join(e.CacheDir, "reaper", "reaper.lock")
	}
	p.AuditLog = SystemAuditLog
	if e.Home == "" {
		return p
	}
	if e.GOOS == "windows" {
		return windows(p, e)
	}
	config := e.Getenv("XDG_CONFIG_HOME")
	if config == "" {
		config = filepath.Join(e.Home, ".config")
	}
	p.home = e.Home
	p.Policy = filepath.Join(config, "reaper", "policy.toml")
	p.LogDir = UserLogDir(e.GOOS, e.Home, e.Getenv)
	p.UserAuditLog = filepath.Join(p.LogDir, "audit.jsonl")
	p.AuditLog = p.UserAuditLog
	return p
}

// windows is a user's Paths on Windows, in its per-user places: the policy
// roams with the user (%APPDATA%, where os.UserConfigDir is), the lock and
// the logs stay on the machine (%LOCALAPPDATA%, where os.UserCacheDir
// is); each below the profile's AppData when its variable is unset.
func windows(p Paths, e Env) Paths {
	dir := func(v string, below ...string) string {
		if d := e.Getenv(v); filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(append([]string{e.Home, "AppData"}, below...)...)
	}
	local := filepath.Join(dir("LOCALAPPDATA", "Local"), "reaper")
	p.home = e.Home
	p.Lock = filepath.Join(local, "reaper.lock")
	p.Policy = filepath.Join(dir("APPDATA", "Roaming"), "reaper", "policy.toml")
	p.LogDir = filepath.Join(local, "logs")
	p.UserAuditLog = filepath.Join(p.LogDir, "audit.jsonl")
	p.AuditLog = p.UserAuditLog
	return p
}

// Said is a user's Paths on goos (a Unix) as help writes them: the runtime
// and config dirs as their variables, the home as ~, with slashes
// whichever system help is shown on.
func Said(goos string) Paths {
	p := New(Env{EUID: 1, GOOS: goos, Home: "~", Getenv: func(k string) string {
		if k == "XDG_RUNTIME_DIR" || k == "XDG_CONFIG_HOME" {
			return "$" + k
		}
		return ""
	}})
	for _, f := range []*string{&p.Lock, &p.Policy, &p.LogDir, &p.UserAuditLog, &p.AuditLog} {
		*f = filepath.ToSlash(*f)
	}
	return p
}

// UserLogDir is a user's LogDir on goos, below home.
func UserLogDir(goos, home string, getenv func(string) string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Logs", "reaper")
	}
	state := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "log", "reaper")
}

// Beside are the files a reaper keeps beside a lock file: what it
// remembers lives as long as the lock's dir (in /run for root, so that a
// reboot, which ends every process they name, forgets them too).
type Beside struct {
	// Watch is the lock a watch holds for its life: a second watch of the
	// scope finds it held.
	Watch string
	// Seen is where a reap remembers the report-only findings it has
	// recorded.
	Seen string
	// Stopped is where a reap writes down what it stops and confines,
	// while it holds the lock.
	Stopped string
	// Respawns is where the kills a respawn is told by are remembered.
	Respawns string
}

// BesideLock names the files beside lock; none when no lock is named
// (never ".seen" in the working directory).
func BesideLock(lock string) Beside {
	if lock == "" {
		return Beside{}
	}
	base := strings.TrimSuffix(lock, ".lock")
	return Beside{Watch: base + ".watch", Seen: base + ".seen", Stopped: base + ".stopped", Respawns: base + ".respawns"}
}

// Text is path as a person types it: a user's home as ~ (root's paths
// are the system's, written whole).
func (p Paths) Text(path string) string {
	if p.home != "" {
		if rest, ok := strings.CutPrefix(path, p.home+string(filepath.Separator)); ok {
			return filepath.Join("~", rest)
		}
	}
	return path
}

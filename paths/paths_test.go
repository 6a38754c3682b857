package paths

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func env(euid uint32, goos, home string, vars map[string]string) Env {
	return Env{EUID: euid, GOOS: goos, Home: home, Getenv: func(k string) string { return vars[k] }, CacheDir: "/c", TempDir: "/tmp"}
}

// Each user's paths, from what its environment says: root's are the
// system's whatever its environment; a user's follow the XDG variables,
// with their defaults when unset; macOS's logs are in ~/Library/Logs.
func TestNew(t *testing.T) {
	xdg := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CONFIG_HOME": "/h/cfg", "XDG_STATE_HOME": "/h/st"}
	for _, tt := range []struct {
		name string
		e    Env
		want Paths
	}{
		{"root", env(0, "linux", "/root", xdg), Paths{Lock: "/run/reaper.lock", Policy: "/etc/reaper/policy.toml", LogDir: "/var/log/reaper", AuditLog: "/var/log/reaper/audit.jsonl"}},
		{"a user, XDG set", env(1000, "linux", "/h", xdg), Paths{Lock: "/run/user/1000/reaper.lock", Policy: "/h/cfg/reaper/policy.toml",
			LogDir: "/h/st/log/reaper", UserAuditLog: "/h/st/log/reaper/audit.jsonl", AuditLog: "/h/st/log/reaper/audit.jsonl", home: "/h"}},
		{"a user, nothing set", env(1000, "linux", "/h", nil), Paths{Lock: "/c/reaper/reaper.lock", Policy: "/h/.config/reaper/policy.toml",
			LogDir: "/h/.local/state/log/reaper", UserAuditLog: "/h/.local/state/log/reaper/audit.jsonl", AuditLog: "/h/.local/state/log/reaper/audit.jsonl", home: "/h"}},
		{"a relative XDG_STATE_HOME", env(1000, "linux", "/h", map[string]string{"XDG_STATE_HOME": "st"}), Paths{Lock: "/c/reaper/reaper.lock", Policy: "/h/.config/reaper/policy.toml",
			LogDir: "/h/.local/state/log/reaper", UserAuditLog: "/h/.local/state/log/reaper/audit.jsonl", AuditLog: "/h/.local/state/log/reaper/audit.jsonl", home: "/h"}},
		{"macOS", env(501, "darwin", "/Users/u", nil), Paths{Lock: "/c/reaper/reaper.lock", Policy: "/Users/u/.config/reaper/policy.toml",
			LogDir: "/Users/u/Library/Logs/reaper", UserAuditLog: "/Users/u/Library/Logs/reaper/audit.jsonl", AuditLog: "/Users/u/Library/Logs/reaper/audit.jsonl", home: "/Users/u"}},
		{"no home, no cache dir", Env{EUID: 1000, Getenv: func(string) string { return "" }, TempDir: "/tmp"}, Paths{Lock: "/tmp/reaper-1000.lock", AuditLog: "/var/log/reaper/audit.jsonl"}},
	} {
		if runtime.GOOS == "windows" && tt.name == "a user, XDG set" {
			continue // /h/st is no absolute path on Windows: XDG_STATE_HOME is ignored there, as a relative one is (below)
		}
		if got, want := toSlash(New(tt.e)), tt.want; got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, want)
		}
	}
}

// toSlash is p as the tests write its paths, Unix's way, on any system.
func toSlash(p Paths) Paths {
	for _, f := range []*string{&p.Lock, &p.Policy, &p.LogDir, &p.UserAuditLog, &p.AuditLog, &p.home} {
		*f = filepath.ToSlash(*f)
	}
	return p
}

// On Windows a user's files are in its per-user places: the policy in
// %APPDATA% (roaming), the lock and the logs in %LOCALAPPDATA%; below the
// profile's AppData when the variables are unset (or not absolute).
func TestNewWindows(t *testing.T) {
	home, local, roaming := filepath.Join(os.TempDir(), "u"), filepath.Join(os.TempDir(), "L"), filepath.Join(os.TempDir(), "R")
	set := New(env(1001, "windows", home, map[string]string{"LOCALAPPDATA": local, "APPDATA": roaming, "XDG_CONFIG_HOME": "/h/cfg"}))
	want := Paths{Lock: filepath.Join(local, "reaper", "reaper.lock"), Policy: filepath.Join(roaming, "reaper", "policy.toml"),
		LogDir: filepath.Join(local, "reaper", "logs"), UserAuditLog: filepath.Join(local, "reaper", "logs", "audit.jsonl"), home: home}
	want.AuditLog = want.UserAuditLog
	if set != want {
		t.Errorf("the variables set:\n got %+v\nwant %+v", set, want)
	}
	unset := New(env(1001, "windows", home, map[string]string{"LOCALAPPDATA": "relative"}))
	if l := filepath.Join(home, "AppData", "Local", "reaper", "reaper.lock"); unset.Lock != l {
		t.Errorf("LOCALAPPDATA not absolute: lock %s, want %s", unset.Lock, l)
	}
	if p := filepath.Join(home, "AppData", "Roaming", "reaper", "policy.toml"); unset.Policy != p {
		t.Errorf("APPDATA unset: policy %s, want %s", unset.Policy, p)
	}
}

// What a reaper keeps beside its lock moves with it; no lock, no files
// (never ".seen" in the working directory).
func TestBesideLock(t *testing.T) {
	want := Beside{Watch: "/x/r.watch", Seen: "/x/r.seen", Stopped: "/x/r.stopped", Respawns: "/x/r.respawns"}
	if got := BesideLock("/x/r.lock"); got != want {
		t.Errorf("BesideLock: %+v, want %+v", got, want)
	}
	if got := BesideLock(""); got != (Beside{}) {
		t.Errorf("BesideLock(\"\"): %+v, want none", got)
	}
}

func TestText(t *testing.T) {
	user := New(env(1000, "linux", filepath.FromSlash("/h"), nil))
	if got := filepath.ToSlash(user.Text(user.Policy)); got != "~/.config/reaper/policy.toml" {
		t.Errorf("a user's policy written %q", got)
	}
	if got := user.Text(filepath.FromSlash("/hx/p")); got != filepath.FromSlash("/hx/p") {
		t.Errorf("a path beside the home written %q", got)
	}
	root := New(env(0, "linux", "/root", nil))
	if got := root.Text("/root/p"); got != "/root/p" {
		t.Errorf("root's path written %q", got)
	}
}

// Help's words for a user's paths.
func TestSaid(t *testing.T) {
	linux, mac := Said("linux"), Said("darwin")
	for got, want := range map[string]string{linux.Lock: "$XDG_RUNTIME_DIR/reaper.lock", linux.Policy: "$XDG_CONFIG_HOME/reaper/policy.toml",
		linux.UserAuditLog: "~/.local/state/log/reaper/audit.jsonl", mac.UserAuditLog: "~/Library/Logs/reaper/audit.jsonl"} {
		if got != want {
			t.Errorf("said %q, want %q", got, want)
		}
	}
}

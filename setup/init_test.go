package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client"
)

// init in one step: the policy written where a run reads it, the hook of
// each client found in the account, and what undoes each; a second run
// keeps the policy and changes nothing. A client whose settings dir is
// not there gets no hook (the control for FindHooks).
func TestInit(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	settings := filepath.Join(home, ".claude", "settings.json")
	mine := "{\n  \"model\": \"opus\"\n}\n"
	os.WriteFile(settings, []byte(mine), 0o600)
	claude := client.Info{Name: "claude-code", Title: "Claude Code", Hook: claudeHook}
	other := client.Info{Name: "other", Title: "Other", Hook: &client.Hook{Dir: "~/.other", File: "settings.json", Event: "SessionStart"}}
	cs := client.NewSet(infoOnly{info: claude}, infoOnly{info: other})
	hooks := FindHooks(cs, func(string) string { return "" }, home)
	if len(hooks) != 1 || hooks[0].Settings != settings {
		t.Fatalf("hooks %+v: want Claude Code's alone", hooks)
	}
	var out bytes.Buffer
	in := &Init{PolicyPath: filepath.Join(home, ".config", "reaper", "policy.toml"), Policy: []byte("version = 1\n"), Hooks: hooks,
		Exe: "/usr/bin/reaper", Out: &out}
	if steps := strings.Join(in.Steps(), "\n"); !strings.Contains(steps, "write    "+in.PolicyPath) || !strings.Contains(steps, "hook     Claude Code's SessionStart") {
		t.Errorf("steps:\n%s", steps)
	}
	if err := in.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(in.PolicyPath); string(b) != "version = 1\n" {
		t.Errorf("policy %q", b)
	}
	if b, _ := os.ReadFile(settings); !strings.Contains(string(b), HookMark) {
		t.Errorf("no hook in:\n%s", b)
	}
	undo := strings.Join(in.Undo(), "\n")
	for _, want := range []string{"/usr/bin/reaper hook uninstall claude-code", "rm " + in.PolicyPath} {
		if !strings.Contains(undo, want) {
			t.Errorf("undo has no %q:\n%s", want, undo)
		}
	}
	// Again: the user's policy is kept, whatever it says now.
	os.WriteFile(in.PolicyPath, []byte("version = 1\n# mine\n"), 0o644)
	if steps := strings.Join(in.Steps(), "\n"); !strings.Contains(steps, "keep     "+in.PolicyPath) {
		t.Errorf("steps with a policy there:\n%s", steps)
	}
	out.Reset()
	in = &Init{PolicyPath: in.PolicyPath, Policy: in.Policy, Hooks: hooks, Exe: in.Exe, Out: &out} // init run again
	if err := in.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(in.PolicyPath); string(b) != "version = 1\n# mine\n" {
		t.Errorf("the user's policy was replaced: %q", b)
	}
	if !strings.Contains(out.String(), "unchanged  "+settings) || strings.Contains(undo2(in), "rm ") {
		t.Errorf("second run: %s; undo %s", out.String(), undo2(in))
	}
	// Undone as it says, the settings are the user's bytes again.
	if err := (&Hook{Client: claude, Out: &out}).Uninstall(settings); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Errorf("after undo: %q", b)
	}
}

func undo2(in *Init) string { return strings.Join(in.Undo(), "\n") }

// infoOnly is a client with facts alone: FindHooks asks nothing else.
type infoOnly struct {
	client.Client
	info client.Info
}

func (c infoOnly) Info() client.Info { return c.info }

// Issue 52, item 6: init whose plan held two hooks changed Claude Code's
// settings, failed on Gemini CLI's (a file it could not edit), and
// exited without the undo lines: half applied. Check tries every step
// first, so that one step that cannot be done changes nothing at all; the
// control, every step possible, passes Check and Apply does all of it.
// What runs reaper from then on is said, and so is the case where
// nothing does.
func TestInitAllOrNone(t *testing.T) {
	home := t.TempDir()
	claude := client.Info{Name: "claude-code", Title: "Claude Code", Hook: claudeHook}
	other := client.Info{Name: "other", Title: "Other", Hook: &client.Hook{Dir: "~/.other", File: "settings.json", Event: "SessionStart"}}
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.MkdirAll(filepath.Join(home, ".other"), 0o755)
	settings := filepath.Join(home, ".claude", "settings.json")
	os.WriteFile(settings, []byte("{}\n"), 0o600)
	broken := filepath.Join(home, ".other", "settings.json")
	os.WriteFile(broken, []byte("{\n  \"a\": 1,\n  \"a\": 2\n}\n"), 0o600) // a key twice: not edited
	cs := client.NewSet(infoOnly{info: claude}, infoOnly{info: other})
	in := &Init{PolicyPath: filepath.Join(home, ".config", "reaper", "policy.toml"), Policy: []byte("version = 1\n"),
		Hooks: FindHooks(cs, func(string) string { return "" }, home), Exe: "/usr/bin/reaper", Out: &bytes.Buffer{}}
	err := in.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Other's hook") {
		t.Fatalf("Check: %v, want Other's hook refused", err)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
		t.Errorf("Check changed Claude Code's settings: %q", b)
	}
	if _, err := os.Stat(in.PolicyPath); err == nil {
		t.Error("Check wrote the policy")
	}
	if len(in.Undo()) != 0 {
		t.Errorf("undo lines for nothing done: %v", in.Undo())
	}
	// The control: the file fixed, every step can be done, and is.
	os.WriteFile(broken, []byte("{}\n"), 0o600)
	if err := in.Check(context.Background()); err != nil {
		t.Fatalf("control, Check: %v", err)
	}
	if err := in.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if runs := in.RunsFrom(); !strings.Contains(runs, "at the start of each session of Claude Code, Other") {
		t.Errorf("RunsFrom: %s", runs)
	}
	if undo := strings.Join(in.Undo(), "\n"); !strings.Contains(undo, "hook uninstall other") || !strings.Contains(undo, "rm ") {
		t.Errorf("undo:\n%s", undo)
	}
	nothing := &Init{PolicyPath: in.PolicyPath, Policy: in.Policy, Exe: in.Exe, Out: &bytes.Buffer{}}
	nothing.Apply(context.Background())
	if runs := nothing.RunsFrom(); !strings.HasPrefix(runs, "Nothing will run reaper on its own here") {
		t.Errorf("no hook, no service: %s", runs)
	}
}

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

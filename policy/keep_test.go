package policy

import (
	"strings"
	"testing"
)

// A tree that asks to be kept — a member of the root's user whose
// environment carries REAPER_KEEP=1 — is never signalled: the plan
// protects it and says by whose word, and the seam's deny list holds its
// members. The controls: without the mark, or with another value, the
// same tree is planned; a mark on another user's process in root's tree
// keeps nothing; a rule that says override_keep acts on it, and policy
// check says so.
func TestKeepMark(t *testing.T) {
	tree := func(rootEnv, childEnv []string) *Plan {
		return planFor(t, ModeReap, 0,
			proc(300, 1, []string{"npx", "x-mcp"}, rootEnv, "/", 1000),
			proc(301, 300, []string{"node", "x-mcp-server"}, childEnv, "/", 1000))
	}
	t.Run("the root's own word", func(t *testing.T) {
		pl := tree([]string{"REAPER_KEEP=1"}, nil)
		check(t, pl, want{300, "mcp", Terminate, Protected, "kept by its own word: pid 300 (x) carries REAPER_KEEP=1"})
		deny := pl.Gate.Deny(pl)
		if !strings.Contains(deny[300], "kept by its own word") || !strings.Contains(deny[301], "kept by its own word") {
			t.Errorf("the seam's deny list: %v", deny)
		}
	})
	t.Run("a member's word keeps its tree", func(t *testing.T) {
		check(t, tree(nil, []string{"REAPER_KEEP=1"}), want{300, "mcp", Terminate, Protected, "pid 301 (x) carries REAPER_KEEP=1"})
	})
	t.Run("control: no mark", func(t *testing.T) {
		check(t, tree(nil, nil), want{300, "mcp", Terminate, Planned, ""})
	})
	t.Run("control: another value", func(t *testing.T) {
		check(t, tree([]string{"REAPER_KEEP=yes"}, []string{"REAPER_KEEP=0"}), want{300, "mcp", Terminate, Planned, ""})
	})
	t.Run("another user's word in root's tree keeps nothing", func(t *testing.T) {
		root := proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000)
		root.UID = 0
		user := proc(301, 300, []string{"node", "x-mcp-server"}, []string{"REAPER_KEEP=1"}, "/", 1000)
		// The rule takes uid 1000's processes as root: without a mark the
		// tree is planned, and the mark changes nothing.
		text := strings.Replace(planPolicy, "kind = [\"mcp\"]\naction = \"terminate\"", "kind = [\"mcp\"]\nuser = [\"0\", \"1000\"]\naction = \"terminate\"", 1)
		pol, err := Parse("plan.toml", []byte(text), testClients)
		if err != nil {
			t.Fatal(err)
		}
		pl, _ := planAs(pol, ModeReap, 0, 0, root, user)
		check(t, pl, want{300, "mcp", Terminate, Planned, ""})
	})
	t.Run("a rule that says override_keep", func(t *testing.T) {
		text := strings.Replace(planPolicy, "kind = [\"mcp\"]\naction = \"terminate\"", "kind = [\"mcp\"]\naction = \"terminate\"\noverride_keep = true", 1)
		pol, err := Parse("plan.toml", []byte(text), testClients)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(pol.Warnings, "\n"), `rule "mcp" has override_keep = true`) {
			t.Errorf("policy check does not say the rule overrides the mark: %q", pol.Warnings)
		}
		pl, _ := planOf(pol, ModeReap, 0,
			proc(300, 1, []string{"npx", "x-mcp"}, []string{"REAPER_KEEP=1"}, "/", 1000))
		check(t, pl, want{300, "mcp", Terminate, Planned, ""})
	})
	t.Run("override_keep is a boolean", func(t *testing.T) {
		text := strings.Replace(planPolicy, "kind = [\"mcp\"]\naction = \"terminate\"", "kind = [\"mcp\"]\naction = \"terminate\"\noverride_keep = \"yes\"", 1)
		if _, err := Parse("plan.toml", []byte(text), testClients); err == nil || !strings.Contains(err.Error(), "override_keep must be true or false") {
			t.Errorf("a string override_keep: %v", err)
		}
	})
}

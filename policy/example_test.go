package policy

import (
	"testing"

	"github.com/orphanreaper/reaper/platform"
)

// The shipped example policy and the embedded default never signal a tree
// on its shape alone: orphans that only look like an agent's leftovers —
// a large MCP-named server, a bare claude or codex, a detached shell with
// OpenClaw's marker, all reparented with no owner's word on them — are
// reported at most. The control: the same MCP server with a dead
// OpenCode's marker (OPENCODE_PID naming a pid that is gone) is planned
// for SIGTERM, so the plan can signal when evidence says so.
func TestExampleNeverSignalsOnShape(t *testing.T) {
	example, err := Load("../packaging/policy.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	big := func(p platform.Process) platform.Process { p.RSS = 512 << 20; return p }
	shapes := []platform.Process{
		big(proc(100, 1, []string{"npm", "exec", "@modelcontextprotocol/server-filesystem", "/"}, nil, "/", 1000)),
		big(proc(101, 1, []string{"node", "/opt/mcp/weather-mcp/dist/index.js"}, []string{"PATH=/usr/bin"}, "/", 1000)),
		big(proc(102, 1, []string{"claude"}, nil, "/", 1000)),
		big(proc(103, 1, []string{"codex", "app-server", "--managed-daemon"}, nil, "/", 1000)),
		big(proc(104, 1, []string{"codex", "exec", "fix the tests"}, nil, "/", 1000)),
		proc(105, 1, []string{"/bin/bash"}, []string{"OPENCLAW_SHELL=exec"}, "/", 1000),
		big(proc(106, 1, []string{"uvx", "mcp-server-git"}, nil, "/", 1000)),
	}
	plan := func(pol *Policy, procs ...platform.Process) *Plan {
		pl, _ := planOf(pol, ModeDryRun, 0, procs...)
		return pl
	}
	for name, pol := range map[string]*Policy{"the example": example, "the default": Default()} {
		pl := plan(pol, shapes...)
		if len(pl.Items)+pl.Unmatched != len(shapes) {
			t.Errorf("%s: %d items and %d unmatched for %d orphans", name, len(pl.Items), pl.Unmatched, len(shapes))
		}
		for _, it := range pl.Items {
			t.Logf("%s: %d %v, kind %s, reasons %v: rule %s, %s", name, it.Finding.Root.PID, it.Finding.Root.Comm, it.Finding.Kind, it.Finding.Reasons, it.Rule.Name, it.Action)
			if it.Signals() {
				t.Errorf("%s: %d (kind %s, reasons %v, owner %q) is planned for %s by %s on its shape alone",
					name, it.Finding.Root.PID, it.Finding.Kind, it.Finding.Reasons, it.Finding.Owner, it.Action, it.Rule.Name)
			}
		}
	}

	dead := big(proc(110, 1, []string{"node", "/opt/mcp/weather-mcp/dist/index.js"}, []string{"OPENCODE_PID=4242"}, "/", 1000))
	dead.PGID = 4242 // the group the dead opencode led
	pl := plan(example, dead)
	if len(pl.Items) != 1 || !pl.Items[0].Signals() || pl.Items[0].Rule.Name != "agent-client-dead" {
		for _, it := range pl.Items {
			t.Logf("control: %d rule %s %s, reasons %v, evidence %q", it.Finding.Root.PID, it.Rule.Name, it.Action, it.Finding.Reasons, it.Finding.Evidence)
		}
		t.Fatalf("control: an MCP server whose OpenCode is gone is not planned for a signal by agent-client-dead (%d items)", len(pl.Items))
	}
}

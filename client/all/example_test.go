package all

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// clients is what the policies are given of the shipped clients.
var clients = policy.Clients{Owners: Clients.Owners(), Marks: Clients.Marks(), Names: Clients.Names()}

// proc is a live process of uid with the details given.
func proc(pid, ppid int, argv []string, env []string, cg string, uid uint32) platform.Process {
	return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', Comm: "x",
		StartTicks: uint64(pid), RSS: 4096, UID: uid}.WithDetails(argv, env, platform.Cgroup{Unified: cg})
}

// planOf is pol's plan of a table of procs under init, made by uid 1000:
// decided as every run decides (run.Table.Decide: the details loaded, the
// table frozen).
func planOf(pol *policy.Policy, mode policy.Mode, procs ...platform.Process) *policy.Plan {
	base := []platform.Process{proc(1, 0, []string{"/sbin/init"}, nil, "/", 0)}
	s := platform.NewSnapshot(append(base, procs...), "boot", 1000*time.Second, time.Unix(0, 0))
	s.FixtureUID = 1000
	res, _ := scan.Scan(s, pol.ScanConfig(), nil)
	return (&run.Table{Snap: s, Result: res}).Decide(run.Config{Policy: pol}, mode)
}

// The shipped example policy and the embedded default never signal a tree
// on its shape alone: orphans that only look like an agent's leftovers —
// a large MCP-named server, a bare claude or codex, a detached shell with
// OpenClaw's marker, all reparented with no owner's word on them — are
// reported at most. The control: the same MCP server with a dead
// OpenCode's marker (OPENCODE_PID naming a pid that is gone) is planned
// for SIGTERM, so the plan can signal when evidence says so.
func TestExampleNeverSignalsOnShape(t *testing.T) {
	example, err := policy.Load("../../packaging/policy.example.toml", clients)
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
	plan := func(pol *policy.Policy, procs ...platform.Process) *policy.Plan {
		return planOf(pol, policy.ModeDryRun, procs...)
	}
	for name, pol := range map[string]*policy.Policy{"the example": example, "the default": policy.Default(clients)} {
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

// The example in reaper.toml(5) is a valid policy: the man page cannot
// teach a format the loader refuses.
func TestManPageExample(t *testing.T) {
	b, err := os.ReadFile("../../packaging/man/reaper.toml.5")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	start, end := strings.Index(page, ".EX\n"), strings.Index(page, ".EE\n")
	if start < 0 || end < start {
		t.Fatal("reaper.toml(5) has no .EX … .EE example")
	}
	example := strings.ReplaceAll(page[start+4:end], `\-`, "-")
	p, err := policy.Parse("reaper.toml.5", []byte(example), clients)
	if err != nil {
		t.Fatalf("the man page's example: %v\n%s", err, example)
	}
	if len(p.Rules) != 1 || !p.Rules[0].Evidence || len(p.Protect) != 1 {
		t.Errorf("the man page's example read as %d rules (evidence %v), %d protect entries", len(p.Rules), len(p.Rules) > 0 && p.Rules[0].Evidence, len(p.Protect))
	}
}

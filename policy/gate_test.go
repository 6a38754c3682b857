package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

const gatePolicy = `version = 1
[[owner]]
name = "gw"
cmdline = '^gateway$'

[[rule]]
name = "mcp"
when = ["reparented"]
action = "terminate"

[[rule]]
name = "alice's too"
when = ["untracked"]
user = ["1001"]
action = "terminate"

[[protect]]
name = "login shells"
cmdline = '^-bash$'
`

// gateFor scans procs (uid 1000 unless set) under a reaper of uid 1000 and
// returns the gate and the snapshot.
func gateFor(t *testing.T, doubts []Doubt, procs ...platform.Process) (*Gate, *Policy, *platform.Snapshot) {
	t.Helper()
	pol, err := Parse("gate.toml", []byte(gatePolicy), testClients)
	if err != nil {
		t.Fatal(err)
	}
	base := []platform.Process{proc(1, 0, []string{"/sbin/init"}, nil, "/", 1)}
	s := platform.NewSnapshot(append(base, procs...), "boot", 1000*time.Second, time.Unix(0, 0))
	s.Self = 50
	res, _ := scan.Scan(s, pol.ScanConfig(), nil)
	return pol.NewGate(res, 1000, doubts), pol, s
}

// The gate's decisions, one case each, with the same process admitted as
// the control where only one fact differs.
func TestGateAdmit(t *testing.T) {
	other := proc(103, 1, []string{"sleep"}, nil, "/", 1000)
	other.UID = 1002
	alice := proc(104, 1, []string{"sleep"}, nil, "/", 1000)
	alice.UID = 1001
	unknown := proc(105, 1, []string{"sleep"}, nil, "/", 1000)
	unknown.UID = platform.NoUID
	// A process of the reaper's uid naming alice's state dir: alice's
	// unreadable state is not its doubt (a user's state speaks, and
	// doubts, only for that user's processes).
	named := proc(106, 1, []string{"sleep"}, []string{"OPENCLAW_STATE_DIR=/home/alice/.openclaw"}, "/", 1000)
	g, pol, s := gateFor(t, []Doubt{{Reason: "alice's state could not be read", UID: 1001}},
		proc(40, 1, []string{"bash"}, nil, "/", 1000),
		proc(50, 40, []string{"reaper", "reap"}, nil, "/", 1000),
		proc(100, 1, []string{"sleep"}, nil, "/", 1000),
		proc(101, 1, []string{"gateway"}, nil, "/", 1000),
		proc(102, 1, []string{"-bash"}, nil, "/", 1000),
		other, alice, unknown, named,
	)
	mcp, aliceRule := &pol.Rules[0], &pol.Rules[1]
	tests := []struct {
		pid  int
		rule *Rule
		want string
	}{
		{100, mcp, ""},
		{1, mcp, "pid 1"},
		{50, mcp, "the reaper itself"},
		{40, mcp, "the reaper's ancestor 40"},
		{101, mcp, "live owner gw"},
		{102, mcp, `protected by "login shells"`},
		{103, mcp, "belongs to uid 1002"},
		{104, mcp, "belongs to uid 1001"},
		{104, aliceRule, "alice's state could not be read"},
		{105, aliceRule, "its owner could not be read"},
		{106, mcp, ""},
	}
	for _, tt := range tests {
		why := g.Admit(s, s.Get(tt.pid), tt.rule, nil)
		if tt.want == "" && why != "" || tt.want != "" && !strings.Contains(why, tt.want) {
			t.Errorf("pid %d, rule %q: %q, want %q", tt.pid, tt.rule.Name, why, tt.want)
		}
	}
}

// A process of another snapshot (a rescan's) is judged by what that
// snapshot says of it: a new process that is a live owner by its command
// line is refused although the scan never saw it.
func TestGateAdmitsFromTheRescan(t *testing.T) {
	g, pol, _ := gateFor(t, nil)
	later := platform.NewSnapshot([]platform.Process{
		proc(1, 0, []string{"/sbin/init"}, nil, "/", 1),
		proc(200, 1, []string{"gateway"}, nil, "/", 1000),
		proc(201, 1, []string{"sleep"}, nil, "/", 1000),
	}, "boot", 1000*time.Second, time.Unix(0, 0))
	if why := g.Admit(later, later.Get(200), &pol.Rules[0], nil); !strings.Contains(why, "live owner") {
		t.Errorf("new gateway: %q, want refused as a live owner", why)
	}
	if why := g.Admit(later, later.Get(201), &pol.Rules[0], nil); why != "" {
		t.Errorf("control: new sleep refused: %q", why)
	}
}

// Doubt holds back only what it could speak for: the user's processes and
// nobody else's, even a process naming the state dir; All holds back everything.
func TestGateDoubt(t *testing.T) {
	bob := proc(100, 1, []string{"sleep"}, nil, "/", 1000)
	bob.UID = 1003
	mine := proc(101, 1, []string{"sleep"}, nil, "/", 1000)
	g, _, s := gateFor(t, []Doubt{{Reason: "bob", UID: 1003}}, bob, mine)
	if why := g.Doubtful(s, s.Get(100)); why != "bob" {
		t.Errorf("bob's process: %q, want held back", why)
	}
	if why := g.Doubtful(s, s.Get(101)); why != "" {
		t.Errorf("control: another user's process held back: %q", why)
	}
	g, _, s = gateFor(t, []Doubt{{Reason: "all", All: true}}, bob, mine)
	if why := g.Doubtful(s, s.Get(101)); why != "all" {
		t.Errorf("All: %q, want held back", why)
	}
}

// A planned tree whose process a live owner's ledger holds as running by
// the time of the re-read is spared, refused by design, and the gate
// refuses that pid from then on; the control, a re-read without the run,
// spares nothing.
func TestPlanSpareOwned(t *testing.T) {
	procs := func() []platform.Process {
		return []platform.Process{
			proc(1, 0, []string{"/sbin/init"}, nil, "/", 1),
			proc(100, 1, []string{"sleep"}, nil, "/", 1000),
			proc(101, 1, []string{"gateway"}, nil, "/", 1000),
		}
	}
	pol, err := Parse("gate.toml", []byte(gatePolicy), testClients)
	if err != nil {
		t.Fatal(err)
	}
	scanOf := func(runs []ledger.Run) *scan.Result {
		s := platform.NewSnapshot(procs(), "boot", 1000*time.Second, time.Unix(0, 0))
		res, _ := scan.Scan(s, pol.ScanConfig(), nil)
		l := &ledger.Ledger{Version: 1, Source: "test", Owner: ledger.Owner{Name: "gw", PID: 101, Start: "boot:1000"}, Runs: runs}
		res.ApplyLedgers([]*ledger.Ledger{l})
		return res
	}
	for _, tt := range []struct {
		name  string
		runs  []ledger.Run
		spare int
	}{
		{"the run became owned", []ledger.Run{{ID: "r1", PID: 100, Start: "boot:1000", State: ledger.RunRunning}}, 1},
		{"control: nothing became owned", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := pol.Plan(scanOf(nil), PlanOptions{Mode: ModeReap, UID: 1000})
			if len(pl.Items) != 1 || pl.Items[0].Outcome != Planned {
				t.Fatalf("plan: %+v", pl.Items)
			}
			now := scanOf(tt.runs)
			if n := pl.SpareOwned(now); n != tt.spare {
				t.Fatalf("spared %d, want %d", n, tt.spare)
			}
			it := pl.Items[0]
			if tt.spare == 1 && (it.Outcome != Refused || !it.Benign || !strings.Contains(it.Detail, "became run r1")) {
				t.Errorf("item %+v, want spared", it)
			}
			s := now.Tree.Snap
			refused := pl.Gate.Admit(s, s.Get(100), it.Rule, it.Finding) != ""
			if refused != (tt.spare == 1) {
				t.Errorf("the gate refuses pid 100: %v, want %v", refused, tt.spare == 1)
			}
		})
	}
}

// A planned superseded server must be superseded on the second look made
// just before acting, or it is spared; the control, superseded twice,
// spares nothing.
func TestPlanSpareNoLongerSuperseded(t *testing.T) {
	pol, err := Parse("gate.toml", []byte(`version = 1
[[owner]]
name = "gw"
cmdline = '^gateway$'

[[rule]]
name = "superseded"
when = ["superseded"]
action = "terminate"
`), testClients)
	if err != nil {
		t.Fatal(err)
	}
	scanOf := func(superseded string) *scan.Result {
		s := platform.NewSnapshot([]platform.Process{
			proc(1, 0, []string{"/sbin/init"}, nil, "/", 1),
			proc(101, 1, []string{"gateway"}, nil, "/", 1000),
			proc(102, 101, []string{"node", "server.js"}, nil, "/", 1000),
		}, "boot", 1000*time.Second, time.Unix(0, 0))
		res, _ := scan.Scan(s, pol.ScanConfig(), nil)
		l := &ledger.Ledger{Version: 1, Source: "test", Speaker: 1000, Owner: ledger.Owner{Name: "gw", PID: 101, Start: "boot:1000"},
			Runs: []ledger.Run{{ID: "srv", PID: 102, Start: "boot:1000", State: ledger.RunRunning, Superseded: superseded}}}
		res.ApplyLedgers([]*ledger.Ledger{l})
		return res
	}
	for _, tt := range []struct {
		name  string
		now   string
		spare int
	}{
		{"no longer superseded", "", 1},
		{"control: superseded on both looks", "replaced", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := pol.Plan(scanOf("replaced"), PlanOptions{Mode: ModeReap, UID: 1000})
			if len(pl.Items) != 1 || pl.Items[0].Outcome != Planned || !pl.Items[0].Finding.Has(scan.Superseded) {
				t.Fatalf("plan: %+v", pl.Items)
			}
			if n := pl.SpareOwned(scanOf(tt.now)); n != tt.spare {
				t.Fatalf("spared %d, want %d: %+v", n, tt.spare, pl.Items[0])
			}
			if it := pl.Items[0]; tt.spare == 1 && (it.Outcome != Refused || !it.Benign || !strings.Contains(it.Detail, "not shown superseded")) {
				t.Errorf("item %+v, want spared", it)
			}
		})
	}
}

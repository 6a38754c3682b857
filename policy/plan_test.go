package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

const planPolicy = `version = 1
[defaults]
min_age = "1m"
max_actions = 2

[[owner]]
name = "gw"
cmdline = 'dist/entry\.js gateway'
pid_env = "GW_PID"

[[rule]]
name = "gw-only"
when = ["owner-dead"]
owner = ["gw"]
cmdline = 'gw-tool'
action = "terminate"

[[rule]]
name = "young-mcp-report"
when = ["reparented"]
kind = ["mcp"]
cmdline = 'report-me'

[[rule]]
name = "mcp"
when = ["reparented", "owner-dead"]
kind = ["mcp"]
action = "terminate"

[[rule]]
name = "marked"
when = ["owner-dead"]
env = ["GW_PID=^9"]
action = "kill"

[[rule]]
name = "big-in-unit"
when = ["reparented"]
cgroup = '^/big\.scope$'
min_rss = "1MiB"
action = "kill"

[[rule]]
name = "alice-only"
when = ["untracked"]
cmdline = '^alice-tool'
user = ["1001"]
action = "kill"

[[protect]]
name = "login shells"
cmdline = '^-bash$'
`

// proc builds a live process of uid 1000 that started at tick start.
func proc(pid, ppid int, argv []string, env []string, cg string, start uint64) platform.Process {
	return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', Comm: "x",
		StartTicks: start, RSS: 4096, UID: 1000}.WithDetails(argv, env, platform.Cgroup{Unified: cg})
}

func planFor(t *testing.T, mode Mode, self int, procs ...platform.Process) *Plan {
	t.Helper()
	pol, err := Parse("plan.toml", []byte(planPolicy), testClients)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := planOf(pol, mode, self, procs...)
	return pl
}

// planOf scans procs under init with pol's config, as uid 1000, and plans
// them in mode; it returns the plan and the table. Uptime 1000 s: a
// process that started at tick 1000 is 990 s old.
func planOf(pol *Policy, mode Mode, self int, procs ...platform.Process) (*Plan, *platform.Snapshot) {
	return planAs(pol, mode, self, 1000, procs...)
}

// planAs is planOf for a reaper of uid (0: root, which reaches other
// users' trees where a rule's user list takes them in).
func planAs(pol *Policy, mode Mode, self int, uid uint32, procs ...platform.Process) (*Plan, *platform.Snapshot) {
	base := []platform.Process{proc(1, 0, []string{"/sbin/init"}, nil, "/", 1)}
	s := platform.NewSnapshot(append(base, procs...), "boot", 1000*time.Second, time.Unix(0, 0))
	s.Self = self
	res, _ := scan.Scan(s, pol.ScanConfig(), nil)
	return pol.Plan(res, PlanOptions{Mode: mode, UID: uid}), s
}

type want struct {
	root    int
	rule    string
	action  Action
	outcome Outcome
	detail  string
}

func check(t *testing.T, pl *Plan, wants ...want) {
	t.Helper()
	if len(pl.Items) != len(wants) {
		for _, it := range pl.Items {
			t.Logf("item root %d rule %s %s %s %q", it.Finding.Root.PID, it.Rule.Name, it.Action, it.Outcome, it.Detail)
		}
		t.Fatalf("%d items, want %d", len(pl.Items), len(wants))
	}
	for i, w := range wants {
		it := pl.Items[i]
		if it.Finding.Root.PID != w.root || it.Rule.Name != w.rule || it.Action != w.action || it.Outcome != w.outcome ||
			!strings.Contains(it.Detail, w.detail) || (w.detail == "" && it.Detail != "") {
			t.Errorf("item %d: root %d rule %q %s → %s %q; want root %d rule %q %s → %s %q",
				i, it.Finding.Root.PID, it.Rule.Name, it.Action, it.Outcome, it.Detail,
				w.root, w.rule, w.action, w.outcome, w.detail)
		}
	}
}

func TestPlanFirstRuleWins(t *testing.T) {
	pl := planFor(t, ModeDryRun, 0,
		proc(100, 1, []string{"npx", "report-me-mcp"}, nil, "/", 1000),
		proc(101, 1, []string{"npx", "weather-mcp"}, nil, "/", 1000),
		proc(102, 1, []string{"npx", "weather-mcp"}, []string{"GW_PID=999"}, "/", 1000), // mcp rule before marked
		proc(103, 1, []string{"sleep", "1"}, []string{"GW_PID=999"}, "/", 1000),
		proc(104, 1, []string{"postgres"}, nil, "/", 1000), // no rule
	)
	check(t, pl,
		want{100, "young-mcp-report", Report, Reported, ""},
		want{101, "mcp", Terminate, Planned, ""},
		want{102, "mcp", Terminate, Planned, ""},
		want{103, "marked", Report, Reported, "max_actions (2) reached"},
	)
	if pl.Unmatched != 1 {
		t.Errorf("unmatched %d, want 1", pl.Unmatched)
	}
}

func TestPlanMatchers(t *testing.T) {
	big := proc(200, 1, []string{"worker"}, nil, "/big.scope", 1000)
	big.RSS = 2 << 20
	small := proc(201, 1, []string{"worker"}, nil, "/big.scope", 1000)
	envMiss := proc(202, 1, []string{"sleep"}, []string{"GW_PID=123"}, "/", 1000) // owner-dead, but GW_PID !~ ^9
	pl := planFor(t, ModeScan, 0, big, small, envMiss)
	check(t, pl, want{200, "big-in-unit", Kill, Reported, ""})
	if pl.Unmatched != 2 {
		t.Errorf("unmatched %d, want 2", pl.Unmatched)
	}
}

// A rule's owner matcher holds for findings attributed to one of its
// owners only: the same dead-owner tree without the owner's marker, and
// one attributed to no owner at all, are not its.
func TestPlanOwnerMatcher(t *testing.T) {
	pl := planFor(t, ModeScan, 0,
		proc(300, 1, []string{"gw-tool"}, []string{"GW_PID=4242"}, "/", 1000), // gw's, its gateway gone
		proc(301, 1, []string{"gw-tool"}, nil, "/", 1000),                     // the control: no owner
	)
	check(t, pl, want{300, "gw-only", Terminate, Reported, ""})
	if pl.Unmatched != 1 {
		t.Errorf("unmatched %d, want 1 (the tree no owner claims)", pl.Unmatched)
	}
	// The same finding, owner-dead, attributed to gw, to another owner,
	// and to none: only the first is the rule's, and WhyNot says why not.
	pol, _ := Parse("plan.toml", []byte(planPolicy), testClients)
	s := platform.NewSnapshot([]platform.Process{proc(1, 0, []string{"/sbin/init"}, nil, "/", 1), proc(300, 1, []string{"gw-tool"}, nil, "/", 1000)},
		"boot", 1000*time.Second, time.Unix(0, 0))
	for _, tc := range []struct {
		owner, rule, why string
	}{
		{"gw", "gw-only", ""},
		{"other", "", "owner other is not one of gw;"},
		{"", "", "no owner claims it"},
	} {
		f := &scan.Finding{Root: s.Get(300), Reasons: []scan.Reason{scan.Reparented, scan.OwnerDead}, Owner: tc.owner, Kind: scan.KindOther}
		got := ""
		if r := pol.Match(s, f); r != nil {
			got = r.Name
		}
		if got != tc.rule || tc.why != "" && !strings.Contains(pol.WhyNot(s, f), tc.why) {
			t.Errorf("owner %q: rule %q (why not: %s), want %q", tc.owner, got, pol.WhyNot(s, f), tc.rule)
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	// A tree that holds the reaper is rooted at the reaper or one of its
	// ancestors: it is left out (counted), never a finding — a reaper run
	// under a name that matches a rule, or under a reparented shell, is
	// not its own refusal. Its sibling, reparented alike, is planned.
	t.Run("tree holds the reaper", func(t *testing.T) {
		pl := planFor(t, ModeReap, 300,
			proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000),
			proc(310, 1, []string{"npx", "y-mcp"}, nil, "/", 1000))
		check(t, pl, want{310, "mcp", Terminate, Planned, ""})
		if pl.Own != 1 || pl.Unmatched != 0 {
			t.Errorf("own %d unmatched %d, want 1 and 0", pl.Own, pl.Unmatched)
		}
	})
	t.Run("tree holds the reaper's ancestor", func(t *testing.T) {
		pl := planFor(t, ModeReap, 303,
			proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000),
			proc(301, 300, []string{"sh", "-c", "reaper reap"}, nil, "/", 1000),
			proc(303, 301, []string{"reaper", "reap"}, nil, "/", 1000),
			proc(304, 301, []string{"sleep", "9"}, nil, "/", 1000),
			proc(310, 1, []string{"sleep", "9"}, nil, "/", 1000))
		if len(pl.Items) != 0 || pl.Own != 1 || pl.Unmatched != 1 || pl.UnmatchedFindings[0].Root.PID != 310 {
			t.Errorf("%d items, own %d, unmatched %d; want none, 1, and 1 (pid 310)", len(pl.Items), pl.Own, pl.Unmatched)
		}
	})
	t.Run("tree holds a live owner", func(t *testing.T) {
		pl := planFor(t, ModeReap, 0,
			proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000),
			proc(301, 300, []string{"node", "/opt/oc/dist/entry.js", "gateway"}, nil, "/", 1000))
		check(t, pl, want{300, "mcp", Terminate, Refused, "live owner gw (pid 301)"})
	})
	// Protection is the operator's decision, not a refusal: an outcome of
	// its own. A safety refusal in the same tree still reads refused.
	t.Run("tree holds a protected process", func(t *testing.T) {
		pl := planFor(t, ModeReap, 0,
			proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000),
			proc(301, 300, []string{"-bash"}, nil, "/", 1000))
		check(t, pl, want{300, "mcp", Terminate, Protected, `protected by "login shells"`})
	})
	t.Run("a protected process beside a live owner", func(t *testing.T) {
		pl := planFor(t, ModeReap, 0,
			proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000),
			proc(301, 300, []string{"-bash"}, nil, "/", 1000),
			proc(302, 300, []string{"node", "/opt/oc/dist/entry.js", "gateway"}, nil, "/", 1000))
		check(t, pl, want{300, "mcp", Terminate, Refused, "live owner gw (pid 302)"})
	})
	t.Run("younger than min_age", func(t *testing.T) {
		pol, err := Parse("plan.toml", []byte(planPolicy), testClients)
		if err != nil {
			t.Fatal(err)
		}
		pl, s := planOf(pol, ModeReap, 0, proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 99000))
		check(t, pl, want{300, "mcp", Terminate, Refused, "younger than min_age 1m0s (age 10s): due in 50s"})
		if it := pl.Items[0]; !it.Benign || it.Due.Sub(s.Taken) != 50*time.Second {
			t.Errorf("benign %v, due %v after the snapshot; want true, 50s", it.Benign, it.Due.Sub(s.Taken))
		}
	})
	t.Run("min_age does not refuse a report", func(t *testing.T) {
		pl := planFor(t, ModeReap, 0, proc(300, 1, []string{"npx", "report-me-mcp"}, nil, "/", 99000))
		check(t, pl, want{300, "young-mcp-report", Report, Reported, ""})
	})
	t.Run("another user's process needs a rule naming the user", func(t *testing.T) {
		other := proc(301, 300, []string{"node", "child"}, nil, "/", 1000)
		other.UID = 1001
		pl := planFor(t, ModeReap, 0, proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000), other)
		check(t, pl, want{300, "mcp", Terminate, Refused, "pid 301 belongs to uid 1001"})
	})
	t.Run("a rule naming the user reaches it (as root)", func(t *testing.T) {
		alice := proc(300, 1, []string{"alice-tool"}, nil, "/", 1000)
		alice.UID = 1001
		pol, err := Parse("plan.toml", []byte(planPolicy), testClients)
		if err != nil {
			t.Fatal(err)
		}
		pl, _ := planAs(pol, ModeReap, 0, 0, alice)
		check(t, pl, want{300, "alice-only", Kill, Planned, ""})
	})
	// A reaper that is not root acts on its own uid's trees alone: another
	// user's is out of its scope — no item, no refusal, whatever a rule
	// says — and counted.
	t.Run("another user's tree is out of a user's scope", func(t *testing.T) {
		alice := proc(300, 1, []string{"alice-tool"}, nil, "/", 1000)
		alice.UID = 1001
		pl := planFor(t, ModeReap, 0, alice, proc(400, 1, []string{"npx", "x-mcp"}, nil, "/", 1000))
		check(t, pl, want{400, "mcp", Terminate, Planned, ""})
		if pl.OutOfScope != 1 {
			t.Errorf("out of scope %d, want 1 (uid 1001's tree)", pl.OutOfScope)
		}
	})
	t.Run("scan mode never plans", func(t *testing.T) {
		pl := planFor(t, ModeScan, 0, proc(300, 1, []string{"npx", "x-mcp"}, nil, "/", 1000))
		check(t, pl, want{300, "mcp", Terminate, Reported, ""})
	})
}

// A tree with a member in uninterruptible sleep is left for a later pass
// — refused by design (Benign: no exit 3), saying why — not signalled and
// counted failed on every pass. The control: the same tree asleep
// interruptibly is planned.
func TestPlanUninterruptible(t *testing.T) {
	for _, state := range []byte{'D', 'S'} {
		root := proc(50, 1, []string{"npm", "exec", "some-mcp"}, nil, "/", 1000)
		child := proc(51, 50, []string{"lsof", "-n"}, nil, "/", 1000)
		child.State = state
		pl := planFor(t, ModeReap, 0, root, child)
		if state == 'D' {
			check(t, pl, want{50, "mcp", Terminate, Refused, "pid 51 is in uninterruptible sleep (state D)"})
			if !pl.Items[0].Benign {
				t.Error("a tree left for its D-state member is counted a failure")
			}
		} else {
			check(t, pl, want{50, "mcp", Terminate, Planned, ""})
		}
	}
}

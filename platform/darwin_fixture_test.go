package platform_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// fixtureProc is one process of the macOS-shaped machine, described once
// and rendered both as macOS reports it (kinfo_proc + procargs2) and as a
// Linux snapshot.
type fixtureProc struct {
	pid, ppid int
	comm      string
	argv, env []string
	zombie    bool
	noArgs    bool // kern.procargs2 refuses (another user's process)
}

var (
	taken = time.Unix(1795300000, 0)
	boot  = taken.Add(-48 * time.Hour)
)

// macMachine: launchd; a live gateway (a LaunchAgent, so launchd's child)
// with an MCP server and a zombie it has not reaped; an ACP wrapper and its
// adapter left by a gateway that is gone (its pid marker names pid 250);
// an MCP wrapper and server reparented to launchd with nothing claiming
// them; a process whose arguments can't be read.
var macMachine = []fixtureProc{
	{pid: 1, comm: "launchd", argv: []string{"/sbin/launchd"}},
	{pid: 300, ppid: 1, comm: "node", argv: []string{"node", "/usr/local/lib/node_modules/openclaw/openclaw.mjs", "gateway"},
		env: []string{"OPENCLAW_SERVICE_MARKER=openclaw"}},
	{pid: 301, ppid: 300, comm: "npm exec @model", argv: []string{"npm exec @modelcontextprotocol/server-filesystem /tmp"}},
	{pid: 302, ppid: 300, comm: "sh", zombie: true},
	{pid: 400, ppid: 1, comm: "node", argv: []string{"node", "/Users/a/.openclaw/acpx/claude-agent-acp-wrapper.mjs", "--openclaw-acpx-lease-id", "L1"},
		env: []string{"OPENCLAW_SHELL=acp", "OPENCLAW_GATEWAY_SERVICE_PID=250"}},
	{pid: 401, ppid: 400, comm: "node", argv: []string{"node", "/Users/a/.openclaw/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"}},
	{pid: 500, ppid: 1, comm: "npx", argv: []string{"npx", "-y", "@upstash/context7-mcp"}},
	{pid: 501, ppid: 500, comm: "node", argv: []string{"node", "/Users/a/.npm/_npx/x/node_modules/@upstash/context7-mcp/dist/index.js"}},
	{pid: 700, ppid: 1, comm: "secretd", noArgs: true},
}

func started(pid int) time.Time { return taken.Add(-time.Duration(pid) * time.Minute) }

func darwinSnapshot(t *testing.T) *platform.Snapshot {
	t.Helper()
	var raw []byte
	args := map[int][]byte{}
	for _, p := range macMachine {
		stat := int8(3)
		if p.zombie {
			stat = 5
		}
		st := started(p.pid)
		raw = append(raw, platform.MakeKinfo(p.pid, p.ppid, p.pid, 501, stat, p.comm, st.Unix(), int32(st.Nanosecond()/1000))...)
		if !p.noArgs && !p.zombie {
			args[p.pid] = platform.MakeProcargs2("/usr/local/bin/"+p.comm, p.argv, p.env)
		}
	}
	procargs := func(pid int) ([]byte, error) {
		if b, ok := args[pid]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("procargs2 of %d: %w", pid, platform.ErrNoArgs)
	}
	s, err := platform.DarwinSnapshot(raw, procargs, func(pid int) int { return pid }, func(int) uint64 { return 4096 }, taken, boot)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func linuxSnapshot() *platform.Snapshot {
	var procs []platform.Process
	for _, p := range macMachine {
		lp := platform.Process{PID: p.pid, PPID: p.ppid, PGID: p.pid, SID: p.pid, Comm: p.comm, State: 'S', UID: 501, RSS: 4096,
			StartTicks: uint64(started(p.pid).Sub(boot) / (10 * time.Millisecond))}
		if p.zombie {
			lp.State = 'Z'
		}
		if !p.zombie {
			lp = lp.WithDetails(p.argv, p.env, platform.Cgroup{})
		}
		procs = append(procs, lp)
	}
	return platform.NewSnapshot(procs, "boot", taken.Sub(boot), taken)
}

// summary is what must be the same on both platforms.
func summary(s *platform.Snapshot) []string { return summaryAs(s, 501) }

// summaryAs is summary for a reaper of uid.
func summaryAs(s *platform.Snapshot, uid uint32) []string {
	// OpenClaw's ACP wrapper is acp, as its adapter's mark says; the
	// fixture is read alike on both platforms.
	pol := policy.Default(policy.Clients{Marks: scan.Marks{Commands: []scan.CommandMark{{Cmdline: scan.MustPattern(`-acp-wrapper\.mjs`), Kind: scan.KindACP}}}})
	res, _ := scan.Scan(s, pol.ScanConfig(), nil)
	m := pol.MatchAll(res, policy.PlanOptions{Mode: policy.ModeScan, UID: uid})
	res.ResolveInUse(m.Roots())
	plan := pol.Decide(res, m)
	var out []string
	for _, it := range plan.Items {
		f := it.Finding
		var rs []string
		for _, r := range f.Reasons {
			rs = append(rs, string(r))
		}
		out = append(out, fmt.Sprintf("%d %s %s [%s] %v %s", f.Root.PID, f.Kind, it.Rule.Name, strings.Join(rs, ","), f.PIDs(), it.Outcome))
	}
	for _, z := range res.Zombies {
		out = append(out, fmt.Sprintf("zombie %d under %d", z.Proc.PID, z.Proc.PPID))
	}
	return out
}

func TestDarwinSnapshotMatchesLinux(t *testing.T) {
	mac := darwinSnapshot(t)
	want := []string{
		"400 acp owner-dead [reparented,owner-dead] [400 401] reported",
		"500 mcp orphaned-mcp [reparented,untracked] [500 501] reported",
		"zombie 302 under 300",
	}
	if got := summary(mac); !reflect.DeepEqual(got, want) {
		t.Errorf("macOS snapshot:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, lin := summary(mac), summary(linuxSnapshot()); !reflect.DeepEqual(got, lin) {
		t.Errorf("macOS and Linux differ:\n%s\nvs\n%s", strings.Join(got, "\n"), strings.Join(lin, "\n"))
	}

	// Identities are macOS's "<seconds>.<microseconds>"; ages from wall time.
	p := mac.Get(400)
	if id := mac.Identity(p); id != fmt.Sprintf("%d.000000", started(400).Unix()) {
		t.Errorf("identity %s", id)
	}
	if age := mac.Age(p); age != 400*time.Minute {
		t.Errorf("age %v", age)
	}
	if p.SID != 400 || p.RSS != 4096 || p.UID != 501 {
		t.Errorf("process %+v", p)
	}
	// The process whose arguments can't be read shows its comm, and a
	// warning says why; it matched no rule.
	if cmd := mac.CommandLine(mac.Get(700)); cmd != "[secretd]" {
		t.Errorf("unreadable argv shows %q", cmd)
	}
	if !strings.Contains(strings.Join(mac.Warnings, "\n"), "procargs2 of 700") {
		t.Errorf("warnings %q", mac.Warnings)
	}
	if v, ok := mac.Getenv(mac.Get(400), "OPENCLAW_GATEWAY_SERVICE_PID"); !ok || v != "250" {
		t.Errorf("env from procargs2: %q %v", v, ok)
	}
}

func TestDarwinSnapshotBadRecords(t *testing.T) {
	_, err := platform.DarwinSnapshot(make([]byte, 100), nil, nil, nil, taken, boot)
	if !errors.Is(err, platform.ErrMalformed) {
		t.Errorf("got %v, want ErrMalformed", err)
	}
}

package openclaw

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Exec trees of ended sessions under a live gateway are advice too.
func TestAdviseEndedExecs(t *testing.T) {
	procs := []platform.Process{
		p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
		p(300, 200, "bash", []string{"bash", "-c", "sleep 600"}, nil, "/"),
	}
	owner := ledger.Owner{Name: OwnerName, PID: 200, Start: id(200)}
	l := &ledger.Ledger{Version: 1, Owner: owner, Source: "test.json", Sessions: []ledger.Session{{Key: "s", State: ledger.SessionClosed}},
		Runs: []ledger.Run{{ID: "exec:x", PID: 300, Start: id(300), State: ledger.RunRunning, Session: "s", Kind: "exec"}}}
	advice := adviceOf(procs, []*ledger.Ledger{l}, &adviser{Dir: "/s", Gateway: &Gateway{StateDir: "/s", Owner: owner}, LiveSessions: 0}, nil)
	if len(advice) != 1 || advice[0].ID != "openclaw-exec-ended" || !strings.Contains(advice[0].Evidence, "1 tree of deleted or reset sessions (roots 300)") {
		t.Errorf("advice %+v", advice)
	}
}

// The sampler tells pools in use from idle ones by the bytes the server
// and its anchor moved in the window; CPU is not asked.
func TestAdviseMCPActivity(t *testing.T) {
	const dist = "/opt/openclaw/dist/process/"
	procs := []platform.Process{
		p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
		p(201, 200, "node", []string{"node", dist + "spawn-broker/worker.js"}, nil, "/"),
	}
	for k, pid := 0, 210; k < 3; k, pid = k+1, pid+10 {
		procs = append(procs,
			p(pid, 201, "node", []string{"node", dist + "supervisor/service-child-relay.js"}, nil, "/"),
			p(pid+1, pid, "node", []string{"node", dist + "supervisor/service-child-group-anchor.js"}, nil, "/"),
			p(pid+2, pid+1, "node", []string{"node", "/srv/mcp/memory.js"}, nil, "/"))
	}
	var asked []int
	sampler := func(ps []*platform.Process) map[int]scan.Activity {
		out := map[int]scan.Activity{}
		for _, p := range ps {
			asked = append(asked, p.PID)
			out[p.PID] = scan.Activity{}
		}
		out[221] = scan.Activity{Bytes: 640, Switches: 12} // the second pool's anchor relays a request
		return out
	}
	gw := &Gateway{StateDir: "/s", Owner: ledger.Owner{Name: OwnerName, PID: 200, Start: id(200)}}
	srv := MCPServer{Server: scan.Server{Name: "memory", Command: "node", Args: []string{"/srv/mcp/memory.js"}, File: "/s/openclaw.json"}}
	advice := adviceOf(procs, nil, &adviser{Dir: "/s", Gateway: gw, Servers: []MCPServer{srv}, LiveSessions: 3}, sampler)
	if len(advice) != 1 || !strings.Contains(advice[0].Evidence, "in the sampling window 1 moved bytes (server pids 222 (640 bytes)), 2 were idle (212, 232)") {
		t.Errorf("advice %+v", advice)
	}
	if len(asked) != 6 {
		t.Errorf("sampled %v, want the 3 servers and their 3 anchors", asked)
	}
}

// A live gateway's codex app-server runs four MCP servers (one per thread
// it started) for one thread a session is still bound to: advice names the
// three of ended threads and the untied one; OpenClaw's own MCP pool count
// leaves the app-server's servers out, and the exec advice does not count
// them. Control: as many servers as live threads gives none.
func TestAdviseCodex(t *testing.T) {
	procs := []platform.Process{
		p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
		p(300, 200, "node", []string{"node", "codex.js", "app-server"}, nil, "/"),
		p(301, 300, "codex", []string{"codex", "app-server"}, nil, "/"),
	}
	as := CodexAppServer{PID: 300, Start: id(300), LiveThreads: 1}
	for k, thread := range []string{"t1", "t2", "t3", "t4", ""} {
		pid := 310 + k
		procs = append(procs, p(pid, 301, "node", []string{"node", "/srv/mcp/memory.js"}, nil, "/"))
		as.Children = append(as.Children, CodexChild{PID: pid, Start: id(pid), Server: "memory", Thread: thread, Bound: thread == "t4"})
	}
	gw := &Gateway{StateDir: "/home/a/.openclaw", Owner: ledger.Owner{Name: OwnerName, PID: 200, Start: id(200)}}
	server := MCPServer{Server: scan.Server{Name: "memory", Command: "node", Args: []string{"/srv/mcp/memory.js"}, File: "/home/a/.openclaw/openclaw.json"}}
	advise := func(as CodexAppServer) map[string]string {
		got := map[string]string{}
		for _, a := range adviceOf(procs, nil, &adviser{Dir: gw.StateDir, Gateway: gw, Servers: []MCPServer{server}, LiveSessions: 1, Codex: []CodexAppServer{as}}, nil) {
			got[a.ID] = a.Evidence
		}
		return got
	}
	got := advise(as)
	want := "codex app-server pid 300 under gateway pid 200 (/home/a/.openclaw) runs 5 MCP servers (memory ×5)"
	if a := got["openclaw-codex-mcp-threads"]; !strings.HasPrefix(a, want) || !strings.Contains(a, "for 1 live thread") ||
		!strings.Contains(a, "3 belong to threads no session is bound to any more: 310 (thread t1), 311 (thread t2), 312 (thread t3)") ||
		!strings.Contains(a, "1 could not be tied to a thread by start time: 314") {
		t.Errorf("codex advice %q, want %q, the ended threads' servers and the untied one", a, want)
	}
	if a, ok := got["openclaw-mcp-idle-ttl"]; ok {
		t.Errorf("the app-server's servers counted as the gateway's own pools: %q", a)
	}
	as.Children = as.Children[3:4]
	if a, ok := advise(as)["openclaw-codex-mcp-threads"]; ok {
		t.Errorf("control: one server for one live thread gives advice %q", a)
	}
}

// p is a process of uid 1000 whose start time is its pid's hundredfold.
func p(pid, ppid int, comm string, argv []string, env []string, cg string) platform.Process {
	return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', Comm: comm,
		StartTicks: uint64(pid) * 100, RSS: uint64(pid) * 1024, UID: 1000}.
		WithDetails(argv, env, platform.Cgroup{Unified: cg})
}

func id(pid int) string { return platform.FormatIdentity("boot", uint64(pid)*100) }

// adviceOf scans procs, under init and a systemd --user, with OpenClaw's
// marks and the gateway as an owner, applies the ledgers and asks a for
// its advice.
func adviceOf(procs []platform.Process, ledgers []*ledger.Ledger, a *adviser, sample scan.Sampler) []scan.Advice {
	base := []platform.Process{
		p(1, 0, "systemd", []string{"/sbin/init"}, nil, "/init.scope"),
		p(10, 1, "systemd", []string{"/lib/systemd/systemd", "--user"}, nil, "/user.slice/user@1000.service/init.scope"),
	}
	snap := platform.NewSnapshot(append(base, procs...), "boot", 10*time.Hour, time.Unix(0, 0))
	cfg := scan.Config{Marks: marks, Owners: []scan.Owner{{Name: OwnerName, Cmdline: regexp.MustCompile(`(^|/)openclaw-gateway( |$)`)}}}
	r, err := scan.Scan(snap, cfg, func(_, _ []*platform.Process) (scan.Evidence, error) {
		return scan.Evidence{Ledgers: ledgers}, nil
	})
	if err != nil {
		panic(err)
	}
	r.Advise([]scan.Adviser{a}, sample)
	return r.Advice
}

package scan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/openclaw"
	"github.com/orphanreaper/reaper/platform"
)

// A live gateway holding three stdio MCP servers (each under its relay and
// anchor) for one live session, with mcp.sessionIdleTtlMs unset: advice
// names the setting, with the count by server and the sessions. Controls:
// the TTL set and one pool per session gives none; a dead gateway gives
// none.
func TestAdviseMCPPools(t *testing.T) {
	const dist = "/opt/openclaw/dist/process/"
	procs := []platform.Process{
		p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
		p(201, 200, "node", []string{"node", dist + "spawn-broker/worker.js"}, nil, "/"),
	}
	pid := 210
	for k := 0; k < 3; k++ {
		procs = append(procs,
			p(pid, 201, "node", []string{"node", dist + "supervisor/service-child-relay.js"}, nil, "/"),
			p(pid+1, pid, "node", []string{"node", dist + "supervisor/service-child-group-anchor.js"}, nil, "/"),
			p(pid+2, pid+1, "node", []string{"node", "/srv/mcp/memory.js"}, nil, "/"))
		pid += 10
	}
	gw := &openclaw.Gateway{StateDir: "/home/a/.openclaw", Owner: ledger.Owner{Name: "openclaw-gateway", PID: 200, Start: id(200)}}
	server := openclaw.MCPServer{Name: "memory", Command: "node", Args: []string{"/srv/mcp/memory.js"}, File: "/home/a/.openclaw/openclaw.json"}
	for _, tt := range []struct {
		name     string
		ttl      int64
		sessions int
		gw       *openclaw.Gateway
		want     string
	}{
		{"three pools for one session, no TTL", 0, 1, gw, "warning openclaw-mcp-idle-ttl: gateway pid 200 (/home/a/.openclaw) holds 3 stdio MCP servers (memory ×3) for 1 live session,"},
		{"one per session, no TTL", 0, 3, gw, "info openclaw-mcp-idle-ttl"},
		{"control: TTL set, one per session", 600000, 3, gw, ""},
		{"control: the gateway is gone", 0, 1, &openclaw.Gateway{StateDir: "/x", Owner: ledger.Owner{Name: "openclaw-gateway", PID: 4242}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(procs...), testConfig)
			srv := server
			srv.IdleTTLMs = tt.ttl
			r.Advise([]OpenClawState{{Dir: tt.gw.StateDir, Gateway: tt.gw, Servers: []openclaw.MCPServer{srv}, LiveSessions: tt.sessions}}, nil)
			var got []string
			for _, a := range r.Advice {
				got = append(got, a.Severity+" "+a.ID+": "+a.Evidence+" | "+a.Setting)
			}
			all := strings.Join(got, "\n")
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("advice %s, want none", all)
			case tt.want != "" && (!strings.HasPrefix(all, tt.want) || !strings.Contains(all, "mcp.sessionIdleTtlMs in /home/a/.openclaw/openclaw.json")):
				t.Errorf("advice %q, want %q naming the setting", all, tt.want)
			}
		})
	}
}

// Exec trees of ended sessions under a live gateway are advice too.
func TestAdviseEndedExecs(t *testing.T) {
	r := scanTable(snapshot(
		p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
		p(300, 200, "bash", []string{"bash", "-c", "sleep 600"}, nil, "/"),
	), testConfig)
	l := gwLedger(200, id(200), []ledger.Session{{Key: "s", State: ledger.SessionClosed}}, run("exec:x", 300, id(300), ledger.RunRunning, "s"))
	r.ApplyLedgers([]*ledger.Ledger{l})
	r.Advise([]OpenClawState{{Dir: "/s", Gateway: &openclaw.Gateway{StateDir: "/s", Owner: l.Owner}, LiveSessions: 0}}, nil)
	if len(r.Advice) != 1 || r.Advice[0].ID != "openclaw-exec-ended" || !strings.Contains(r.Advice[0].Evidence, "1 tree of deleted or reset sessions (roots 300)") {
		t.Errorf("advice %+v", r.Advice)
	}
}

// Scan folds the evidence gather reads in its one order: the ledger's
// ended session makes the finding first, and the advice, made last, counts
// it; without Advise the finding stands and there is no advice. gather is
// given the live owners the scan met (the gateway, an ancestor of the
// candidate), and its error ends the scan.
func TestScanWithEvidence(t *testing.T) {
	snap := func() *platform.Snapshot {
		return snapshot(
			p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
			p(300, 200, "bash", []string{"bash", "-c", "sleep 600"}, nil, "/"),
		)
	}
	for _, advise := range []bool{true, false} {
		var met []int
		r, err := Scan(snap(), testConfig, func(owners, _ []*platform.Process) (Evidence, error) {
			for _, o := range owners {
				met = append(met, o.PID)
			}
			l := gwLedger(200, id(200), []ledger.Session{{Key: "s", State: ledger.SessionClosed}}, run("exec:x", 300, id(300), ledger.RunRunning, "s"))
			return Evidence{Ledgers: []*ledger.Ledger{l}, Advise: advise,
				States: []OpenClawState{{Dir: "/s", Gateway: &openclaw.Gateway{StateDir: "/s", Owner: l.Owner}}}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(met, []int{200}) {
			t.Errorf("gather was given the live owners %v, want [200]", met)
		}
		if len(r.Findings) != 1 || !r.Findings[0].Has(SessionEnded) {
			t.Errorf("advise %v: findings %+v", advise, r.Findings)
		}
		if got := len(r.Advice) == 1 && r.Advice[0].ID == "openclaw-exec-ended"; got != advise {
			t.Errorf("advise %v: advice %+v", advise, r.Advice)
		}
	}
	// Control: without the evidence, the tree under the live gateway is no
	// finding at all.
	if r, _ := Scan(snap(), testConfig, nil); len(r.Findings) != 0 {
		t.Errorf("without evidence: findings %+v", r.Findings)
	}
	bad := errors.New("a named ledger that does not parse")
	if r, err := Scan(snap(), testConfig, func(_, _ []*platform.Process) (Evidence, error) { return Evidence{}, bad }); r != nil || !errors.Is(err, bad) {
		t.Errorf("a gather error: result %v, error %v", r, err)
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
	sampler := func(ps []*platform.Process) map[int]Activity {
		out := map[int]Activity{}
		for _, p := range ps {
			asked = append(asked, p.PID)
			out[p.PID] = Activity{}
		}
		out[221] = Activity{Bytes: 640, Switches: 12} // the second pool's anchor relays a request
		return out
	}
	r := scanTable(snapshot(procs...), testConfig)
	gw := &openclaw.Gateway{StateDir: "/s", Owner: ledger.Owner{Name: "openclaw-gateway", PID: 200, Start: id(200)}}
	srv := openclaw.MCPServer{Name: "memory", Command: "node", Args: []string{"/srv/mcp/memory.js"}, File: "/s/openclaw.json"}
	r.Advise([]OpenClawState{{Dir: "/s", Gateway: gw, Servers: []openclaw.MCPServer{srv}, LiveSessions: 3}}, sampler)
	if len(r.Advice) != 1 || !strings.Contains(r.Advice[0].Evidence, "in the sampling window 1 moved bytes (server pids 222 (640 bytes)), 2 were idle (212, 232)") {
		t.Errorf("advice %+v", r.Advice)
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
	as := openclaw.CodexAppServer{PID: 300, Start: id(300), LiveThreads: 1}
	for k, thread := range []string{"t1", "t2", "t3", "t4", ""} {
		pid := 310 + k
		procs = append(procs, p(pid, 301, "node", []string{"node", "/srv/mcp/memory.js"}, nil, "/"))
		as.Children = append(as.Children, openclaw.CodexChild{PID: pid, Start: id(pid), Server: "memory", Thread: thread, Bound: thread == "t4"})
	}
	gw := &openclaw.Gateway{StateDir: "/home/a/.openclaw", Owner: ledger.Owner{Name: "openclaw-gateway", PID: 200, Start: id(200)}}
	server := openclaw.MCPServer{Name: "memory", Command: "node", Args: []string{"/srv/mcp/memory.js"}, File: "/home/a/.openclaw/openclaw.json", IdleTTLMs: 0}
	advise := func(as openclaw.CodexAppServer) map[string]string {
		r := scanTable(snapshot(procs...), testConfig)
		r.Advise([]OpenClawState{{Dir: gw.StateDir, Gateway: gw, Servers: []openclaw.MCPServer{server}, LiveSessions: 1, Codex: []openclaw.CodexAppServer{as}}}, nil)
		got := map[string]string{}
		for _, a := range r.Advice {
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

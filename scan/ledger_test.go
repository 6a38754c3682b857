package scan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// id is the start identity p() gives pid: boot "boot", ticks pid*100.
func id(pid int) string { return platform.FormatIdentity("boot", uint64(pid)*100) }

func gwLedger(ownerPID int, ownerStart string, sessions []ledger.Session, runs ...ledger.Run) *ledger.Ledger {
	return &ledger.Ledger{Version: 1, Owner: ledger.Owner{Name: "openclaw-gateway", PID: ownerPID, Start: ownerStart},
		Sessions: sessions, Runs: runs, Source: "test.json"}
}

func run(rid string, pid int, start string, state ledger.RunState, session string) ledger.Run {
	return ledger.Run{ID: rid, PID: pid, Start: start, State: state, Session: session, Kind: "pty"}
}

type ledgerWant struct {
	findings []string // "root:reasons"
	statuses []string // "run:status[:info]"
}

func statuses(r *Result) []string {
	var out []string
	for _, lr := range r.Ledger {
		s := lr.Run.ID + ":" + string(lr.Status)
		if lr.Info != "" {
			s += ":" + lr.Info
		}
		out = append(out, s)
	}
	return out
}

func TestApplyLedgers(t *testing.T) {
	gateway := p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")
	shell := func(pid, ppid int) platform.Process {
		return p(pid, ppid, "bash", []string{"bash", "-c", "npm test"}, nil, "/")
	}
	sessions := []ledger.Session{
		{Key: "main", State: ledger.SessionReset},
		{Key: "child", Parent: "main", State: ledger.SessionActive},
		{Key: "live", State: ledger.SessionActive},
	}
	tests := []struct {
		name  string
		procs []platform.Process
		l     *ledger.Ledger
		want  ledgerWant
	}{
		{
			name:  "a live owner's running run is owned, even reparented",
			procs: []platform.Process{gateway, shell(300, 10)},
			l:     gwLedger(200, id(200), nil, run("r1", 300, id(300), ledger.RunRunning, "live")),
			want:  ledgerWant{nil, []string{"r1:alive"}},
		},
		{
			name:  "owner gone: owner-dead joins reparented",
			procs: []platform.Process{shell(300, 10)},
			l:     gwLedger(250, id(250), nil, run("r1", 300, id(300), ledger.RunRunning, "live")),
			want:  ledgerWant{[]string{"300:reparented,owner-dead"}, []string{"r1:orphaned"}},
		},
		{
			name: "owner pid reused by another process: owner-dead",
			procs: []platform.Process{
				p(250, 1, "postgres", []string{"postgres"}, nil, "/"),
				shell(300, 10),
			},
			l: gwLedger(250, "boot:1", nil, run("r1", 300, id(300), ledger.RunRunning, "live")),
			want: ledgerWant{[]string{"250:reparented,untracked", "300:reparented,owner-dead"},
				[]string{"r1:orphaned"}},
		},
		{
			name:  "owner without a start identity and alive counts as alive",
			procs: []platform.Process{gateway, shell(300, 10)},
			l:     gwLedger(200, "", nil, run("r1", 300, id(300), ledger.RunRunning, "live")),
			want:  ledgerWant{nil, []string{"r1:alive"}},
		},
		{
			name:  "run done, process alive under the live owner: run-done",
			procs: []platform.Process{gateway, shell(300, 200)},
			l:     gwLedger(200, id(200), nil, run("r1", 300, id(300), ledger.RunDone, "live")),
			want:  ledgerWant{[]string{"300:run-done"}, []string{"r1:orphaned"}},
		},
		{
			name:  "session reset under the live owner: session-ended, through the parent session",
			procs: []platform.Process{gateway, shell(300, 200)},
			l:     gwLedger(200, id(200), sessions, run("r1", 300, id(300), ledger.RunRunning, "child")),
			want:  ledgerWant{[]string{"300:session-ended"}, []string{"r1:orphaned"}},
		},
		{
			name:  "pid reused: information only, never a finding",
			procs: []platform.Process{gateway, shell(300, 200)},
			l:     gwLedger(200, id(200), nil, run("r1", 300, "boot:7", ledger.RunDone, "live")),
			want:  ledgerWant{nil, []string{"r1:pid-reused:pid-reused"}},
		},
		{
			name:  "a running run whose process is gone is stale",
			procs: []platform.Process{gateway},
			l:     gwLedger(200, id(200), nil, run("r1", 300, id(300), ledger.RunRunning, "live"), run("r2", 301, id(301), ledger.RunDone, "")),
			want:  ledgerWant{nil, []string{"r1:gone:ledger-stale", "r2:gone"}},
		},
		{
			name:  "a malformed start identity proves nothing",
			procs: []platform.Process{gateway, shell(300, 200)},
			l:     gwLedger(200, id(200), nil, run("r1", 300, "yesterday", ledger.RunDone, "live")),
			want:  ledgerWant{nil, []string{"r1:unverified"}},
		},
		{
			name:  "a run without start identity proves nothing",
			procs: []platform.Process{gateway, shell(300, 200)},
			l:     gwLedger(200, id(200), nil, run("r1", 300, "", ledger.RunDone, "live")),
			want:  ledgerWant{nil, []string{"r1:unverified"}},
		},
		{
			name: "a run inside a larger reparented tree is its own finding; the ledger speaks for its tree only",
			procs: []platform.Process{
				p(290, 1, "sh", []string{"sh", "-c", "wrapper"}, nil, "/"),
				shell(300, 290),
			},
			l:    gwLedger(250, id(250), nil, run("r1", 300, id(300), ledger.RunRunning, "")),
			want: ledgerWant{[]string{"290:reparented,untracked", "300:owner-dead"}, []string{"r1:orphaned"}},
		},
		{
			name:  "argv proof instead of a start identity",
			procs: []platform.Process{p(300, 10, "node", []string{"node", "w.mjs", "--lease", "L1"}, nil, "/")},
			l: gwLedger(250, "", nil, ledger.Run{ID: "L1", PID: 300, State: ledger.RunRunning,
				ArgvProof: [2]string{"--lease", "L1"}}),
			want: ledgerWant{[]string{"300:reparented,owner-dead"}, []string{"L1:orphaned"}},
		},
		{
			name:  "argv proof that does not hold",
			procs: []platform.Process{p(300, 10, "node", []string{"node", "w.mjs", "--lease", "L2"}, nil, "/")},
			l: gwLedger(250, "", nil, ledger.Run{ID: "L1", PID: 300, State: ledger.RunRunning,
				ArgvProof: [2]string{"--lease", "L1"}}),
			want: ledgerWant{[]string{"300:reparented,untracked"}, []string{"L1:pid-reused:pid-reused"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(tt.procs...), testConfig)
			r.ApplyLedgers([]*ledger.Ledger{tt.l})
			if g := got(r); !reflect.DeepEqual(g, tt.want.findings) {
				t.Errorf("findings %q, want %q", g, tt.want.findings)
			}
			if g := statuses(r); !reflect.DeepEqual(g, tt.want.statuses) {
				t.Errorf("ledger statuses %q, want %q", g, tt.want.statuses)
			}
		})
	}
}

func TestApplyLedgersFinding(t *testing.T) {
	r := scanTable(snapshot(p(300, 10, "bash", []string{"bash"}, nil, "/"), p(301, 300, "sleep", []string{"sleep", "9"}, nil, "/")), testConfig)
	l := gwLedger(250, id(250), []ledger.Session{{Key: "s", State: ledger.SessionClosed}},
		ledger.Run{ID: "r9", Kind: "mcp", PID: 300, Start: id(300), State: ledger.RunDone, Session: "s"})
	r.ApplyLedgers([]*ledger.Ledger{l})
	if len(r.Findings) != 1 {
		t.Fatalf("%d findings", len(r.Findings))
	}
	f := r.Findings[0]
	if f.RunID != "r9" || f.Owner != "openclaw-gateway" || f.OwnerPID != 250 || f.Kind != KindMCP {
		t.Errorf("finding %+v", f)
	}
	if want := []Reason{Reparented, OwnerDead, RunDone, SessionEnded}; !reflect.DeepEqual(f.Reasons, want) {
		t.Errorf("reasons %v, want %v", f.Reasons, want)
	}
	joined := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"owner pid 250 is gone", "run r9 is marked done", "session s was closed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("evidence lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, untrackedEvidence) {
		t.Errorf("evidence still says untracked:\n%s", joined)
	}
	if !reflect.DeepEqual(f.PIDs(), []int{300, 301}) {
		t.Errorf("pids %v", f.PIDs())
	}
}

func TestApplyLedgersDetach(t *testing.T) {
	r := scanTable(snapshot(
		p(290, 1, "sh", []string{"sh"}, nil, "/"),
		p(291, 290, "x", []string{"x"}, nil, "/"),
		p(300, 290, "bash", []string{"bash"}, nil, "/"),
		p(301, 300, "sleep", []string{"sleep"}, nil, "/"),
		p(302, 290, "y", []string{"y"}, nil, "/"),
	), testConfig)
	r.ApplyLedgers([]*ledger.Ledger{gwLedger(250, id(250), nil, run("r1", 300, id(300), ledger.RunDone, ""))})
	if len(r.Findings) != 2 {
		t.Fatalf("%d findings", len(r.Findings))
	}
	outer, inner := r.Findings[0], r.Findings[1]
	if !reflect.DeepEqual(outer.PIDs(), []int{290, 291, 302}) || outer.RSS != uint64(290+291+302)*1024 {
		t.Errorf("outer %v rss %d", outer.PIDs(), outer.RSS)
	}
	if !reflect.DeepEqual(inner.PIDs(), []int{300, 301}) || inner.RunID != "r1" {
		t.Errorf("inner %v run %q", inner.PIDs(), inner.RunID)
	}
}

func TestOwnedRun(t *testing.T) {
	gateway := p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")
	// A reparented wrapper holding a live owner's running run.
	r := scanTable(snapshot(gateway, p(290, 10, "sh", []string{"sh"}, nil, "/"), p(300, 290, "bash", []string{"bash"}, nil, "/")), testConfig)
	r.ApplyLedgers([]*ledger.Ledger{gwLedger(200, id(200), nil, run("r1", 300, id(300), ledger.RunRunning, ""))})
	if why, ok := r.OwnedRun(300); !ok || !strings.Contains(why, "run r1 of live owner openclaw-gateway") {
		t.Errorf("OwnedRun(300) = %q, %v", why, ok)
	}
	if _, ok := r.OwnedRun(290); ok {
		t.Error("the wrapper is not a run")
	}
}

// An owner nobody can check — OpenClaw leases with no gateway lock, so no
// pid — proves nothing: a reparented wrapper holding one of its open
// leases is a finding on the process table's evidence, not owned. The
// control: the same lease under a live owner is owned, no finding.
func TestUnknownOwnerProvesNothing(t *testing.T) {
	wrapper := p(300, 1, "node", []string{"node", "/home/a/.openclaw/acpx/claude-acp-wrapper.mjs", "--openclaw-acpx-lease-id", "L1"}, nil, "/")
	lease := ledger.Run{ID: "L1", Kind: "acp", PID: 300, State: ledger.RunRunning, ArgvProof: [2]string{"--openclaw-acpx-lease-id", "L1"}}
	gateway := p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")
	for _, tt := range []struct {
		name  string
		owner ledger.Owner
		want  []string
		owned bool
	}{
		{"no lock: owner unknown", ledger.Owner{Name: "openclaw-gateway"}, []string{"300:reparented,untracked"}, false},
		{"control: a live owner", ledger.Owner{Name: "openclaw-gateway", PID: 200, Start: id(200)}, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(gateway, wrapper), testConfig)
			l := &ledger.Ledger{Version: 1, Owner: tt.owner, Runs: []ledger.Run{lease}, Source: "acpx"}
			r.ApplyLedgers([]*ledger.Ledger{l})
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("findings %v, want %v", g, tt.want)
			}
			if _, owned := r.OwnedRun(300); owned != tt.owned {
				t.Errorf("owned %v, want %v", owned, tt.owned)
			}
		})
	}
}

// The three steps of ApplyLedgers, each on its own: verifyRuns checks runs
// and marks live owners' runs owned without touching the findings;
// dropOwned removes the findings those runs root; foldProven turns the
// proven runs into findings of their own, out of the larger tree that held
// them.
func TestApplyLedgersSteps(t *testing.T) {
	gateway := p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")
	procs := []platform.Process{
		gateway,
		p(300, 10, "bash", []string{"bash", "-c", "npm test"}, nil, "/"), // reparented, owned by the live gateway
		p(400, 10, "bash", []string{"bash", "-c", "make"}, nil, "/"),     // reparented tree holding a done run
		p(401, 400, "sleep", []string{"sleep", "60"}, nil, "/"),
	}
	r := scanTable(snapshot(procs...), testConfig)
	before := len(r.Findings)
	if before != 2 {
		t.Fatalf("%d findings before the ledger, want the two reparented trees", before)
	}
	l := gwLedger(200, id(200), nil,
		run("owned", 300, id(300), ledger.RunRunning, ""),
		run("done", 401, id(401), ledger.RunDone, ""),
		run("gone", 999, "boot:1", ledger.RunRunning, ""))

	proven := r.verifyRuns([]*ledger.Ledger{l})
	if got := statuses(r); !reflect.DeepEqual(got, []string{"owned:alive", "done:alive", "gone:gone:ledger-stale"}) {
		t.Errorf("verifyRuns: statuses %v", got)
	}
	if len(proven) != 1 || r.Tree.Snap.Procs[proven[0].i].PID != 401 || !reflect.DeepEqual(proven[0].reasons, []Reason{RunDone}) {
		t.Errorf("verifyRuns: proven %+v, want the done run's process", proven)
	}
	if _, ok := r.owned[300]; !ok || len(r.Findings) != before {
		t.Errorf("verifyRuns: owned %v, %d findings: it marks, and leaves the findings alone", r.owned, len(r.Findings))
	}

	r.dropOwned()
	if len(r.Findings) != 1 || r.Findings[0].Root.PID != 400 {
		t.Errorf("dropOwned: findings %v, want only 400's", roots(r))
	}

	r.foldProven(proven)
	if got := roots(r); !reflect.DeepEqual(got, []int{400, 401}) {
		t.Fatalf("foldProven: roots %v, want 400 and the done run's own tree 401", got)
	}
	f := r.Findings[1]
	if f.RunID != "done" || !f.Has(RunDone) || len(f.Members) != 1 || r.Ledger[1].Status != StatusOrphaned {
		t.Errorf("foldProven: %+v, ledger %v", f, statuses(r))
	}
	if m := r.Findings[0].Members; len(m) != 1 {
		t.Errorf("foldProven: 400's tree still holds %d members, want 401 detached", len(m))
	}
}

func roots(r *Result) []int {
	var out []int
	for _, f := range r.Findings {
		out = append(out, f.Root.PID)
	}
	return out
}

// A subreaper inside an orphaned tree adopts orphans of its own: their
// findings nest in the outer one. A run whose process roots the inner
// finding is folded into it — not made a second finding of the same root
// (which happened when the outer tree was the last to claim the pid).
func TestFoldProvenIntoNestedFinding(t *testing.T) {
	procs := []platform.Process{
		// The outer tree's pid is the higher (pids wrap), so it is listed
		// after the inner finding.
		p(700, 1, "bash", []string{"bash", "-c", "job"}, nil, "/"),               // reparented to init
		p(710, 700, "tini", []string{"/usr/bin/tini ", "--", "agent"}, nil, "/"), // a subreaper within it
		p(320, 710, "bash", []string{"bash", "-c", "sleep 60; : pty"}, nil, "/"), // adopted by the subreaper
		p(321, 320, "sleep", []string{"sleep", "60"}, nil, "/"),
	}
	r := scanTable(snapshot(procs...), testConfig)
	if got := roots(r); !reflect.DeepEqual(got, []int{320, 700}) {
		t.Fatalf("roots %v, want the subreaper's orphan 320 and the outer tree 700", got)
	}
	l := gwLedger(999, "boot:1", nil, run("r", 320, id(320), ledger.RunRunning, ""))
	r.ApplyLedgers([]*ledger.Ledger{l})
	var at320 []Finding
	for _, f := range r.Findings {
		if f.Root.PID == 320 {
			at320 = append(at320, f)
		}
	}
	if len(at320) != 1 {
		t.Fatalf("%d findings rooted at 320, want one", len(at320))
	}
	if f := at320[0]; f.RunID != "r" || !f.Has(OwnerDead) || !f.Has(Reparented) || f.Kind != KindPTY {
		t.Errorf("320: run %q reasons %v kind %s; want the run folded into the subreaper's finding", f.RunID, f.Reasons, f.Kind)
	}
}

// A live owner's running run below an orphaned tree's root that leads a
// session of its own without a terminal (Codex's TUI starts its managed
// daemon, setsid) is set apart with what it holds: the tree is the rest.
// One that shares its parent's session, or leads one on a terminal, stays
// a member (the gate refuses that tree). The control: without the
// ledger, the daemon and its server are members.
func TestOwnedSessionLeaderSetApart(t *testing.T) {
	inSession := func(pr platform.Process, sid int) platform.Process { pr.SID, pr.PGID = sid, sid; return pr }
	onTerminal := func(pr platform.Process) platform.Process { pr.TTY = 136<<8 | 3; return pr } // /dev/pts/3
	procs := []platform.Process{
		p(500, 10, "codex", []string{"codex", "say hello"}, nil, "/"),                       // the orphaned TUI
		p(510, 500, "codex", []string{"codex", "app-server", "--managed-daemon"}, nil, "/"), // its daemon: setsid
		inSession(p(511, 510, "node", []string{"node", "server.mjs"}, nil, "/"), 510),       // the daemon's server
		inSession(p(530, 500, "node", []string{"node", "helper.mjs"}, nil, "/"), 500),       // an owned run in the TUI's session
		inSession(p(531, 530, "sleep", []string{"sleep", "60"}, nil, "/"), 500),
		onTerminal(p(540, 500, "bash", []string{"bash", "-i"}, nil, "/")), // an owned PTY shell: its own session, a terminal
	}
	daemon := &ledger.Ledger{Version: 1, Owner: ledger.Owner{Name: "codex-daemon", PID: 510, Start: id(510)}, Source: "daemon.pid",
		Runs: []ledger.Run{{ID: "codex app-server daemon", PID: 510, Start: id(510), State: ledger.RunRunning, Kind: "acp"}}}
	helper := &ledger.Ledger{Version: 1, Owner: ledger.Owner{Name: "codex-daemon", PID: 510, Start: id(510)}, Source: "helper.json",
		Runs: []ledger.Run{{ID: "helper", PID: 530, Start: id(530), State: ledger.RunRunning, Kind: "acp"},
			{ID: "shell", PID: 540, Start: id(540), State: ledger.RunRunning, Kind: "pty"}}}
	members := func(f Finding) []int {
		var out []int
		for _, m := range f.Members {
			out = append(out, m.Proc.PID)
		}
		return out
	}

	control := scanTable(snapshot(procs...), testConfig)
	control.ApplyLedgers(nil)
	if got := members(control.Findings[0]); !reflect.DeepEqual(got, []int{500, 510, 511, 530, 531, 540}) || len(control.Findings[0].Apart) != 0 {
		t.Fatalf("control, no ledger: members %v, apart %v; want the whole tree", got, control.Findings[0].Apart)
	}

	r := scanTable(snapshot(procs...), testConfig)
	r.ApplyLedgers([]*ledger.Ledger{daemon, helper})
	if len(r.Findings) != 1 {
		t.Fatalf("findings %v, want the TUI's alone", roots(r))
	}
	f := r.Findings[0]
	if got := members(f); !reflect.DeepEqual(got, []int{500, 530, 531, 540}) {
		t.Errorf("members %v, want the TUI, the owned run of its session and the owned shell on a terminal (the gate's to refuse)", got)
	}
	if len(f.Apart) != 1 || f.Apart[0].PID != 510 {
		t.Errorf("apart %v, want the daemon", f.Apart)
	}
	if want := uint64(500+530+531+540) * 1024; f.RSS != want {
		t.Errorf("RSS %d, want %d: the daemon's and its server's left out", f.RSS, want)
	}
	if ev := strings.Join(f.Evidence, "\n"); !strings.Contains(ev, "pid 510, run codex app-server daemon of live owner codex-daemon (pid 510), leads a session of its own: it and the process below it are not this tree's") {
		t.Errorf("evidence %q does not say what was set apart", ev)
	}
}

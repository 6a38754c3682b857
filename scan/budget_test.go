package scan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// What any user controls costs the scan at most a fixed amount, and no
// user's claim or process stands in for another user's owner
// (docs/threat-model.md, attacks 12-18).

// A pid marker's live owner is the owner only when it can be the one that
// spawned the marked process: of that process's user or root, and started
// before it. User A takes the pid that B's (and root's) orphans name, by
// pid reuse, with a process titled like the gateway: the orphans are
// owner-dead, the evidence says why. The controls: B's own gateway, or
// root's, started before the orphans, owns them.
func TestPIDMarkerOwnerMustBeItsOwner(t *testing.T) {
	const a, b = 1001, 1002
	gateway := func(uid uint32, start uint64) platform.Process {
		g := as(uid, p(500, 1, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"))
		g.StartTicks = start
		return g
	}
	orphan := func(pid int, uid uint32) platform.Process {
		o := as(uid, p(pid, 1, "node", []string{"node", "/srv/x.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=500"}, "/"))
		o.StartTicks = 60000
		return o
	}
	for _, tt := range []struct {
		name string
		gw   platform.Process
		want []string
		why  string
	}{
		{"A's process at the pid", gateway(a, 50000), []string{"700:reparented,owner-dead", "710:reparented,owner-dead"}, "of uid 1001, not of uid"},
		{"B's process at the pid, started after the orphans", gateway(b, 70000), []string{"700:reparented,owner-dead", "710:reparented,owner-dead"}, "which started 1m40s after"},
		{"control: B's gateway, started before", gateway(b, 50000), []string{"700:reparented", "710:reparented,owner-dead"}, "of uid 1002, not of uid 0"},
		{"control: root's gateway, started before", gateway(0, 50000), []string{"700:reparented", "710:reparented"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(tt.gw, orphan(700, b), orphan(710, 0)), testConfig)
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("findings %v, want %v", g, tt.want)
			}
			ev := strings.Join(r.Findings[0].Evidence, "\n") + strings.Join(r.Findings[1].Evidence, "\n")
			if tt.why != "" && !strings.Contains(ev, tt.why) {
				t.Errorf("the evidence does not say %q:\n%s", tt.why, ev)
			}
		})
	}
}

// Another user's claim is no answer: B's process carries B's session id,
// and A's state claims the same id. Whichever order the claims come in,
// B's tie holds and A's claim is dropped and counted. The control: with
// A's claim alone, B's process is untracked.
func TestForeignTieIsSkipped(t *testing.T) {
	const a, b = 1001, 1002
	tie := func(speaker uint32, owner int) Tie {
		return Tie{Env: "CLAUDE_CODE_SESSION_ID", Value: "s-b", Strong: "CLAUDE_CODE_SESSION_ID", Speaker: speaker,
			Owner: ledger.Owner{Name: "claude", PID: owner}, Where: "claude session s-b", Proof: fmt.Sprintf("the session file of uid %d", speaker), Noun: "claude"}
	}
	shell := as(b, p(600, 1, "bash", []string{"bash"}, []string{"CLAUDE_CODE_SESSION_ID=s-b"}, "/"))
	for _, tt := range []struct {
		name    string
		ties    []Tie
		want    []string
		ignored int // A's claim is counted when it is asked (before B's)
	}{
		{"A's claim first", []Tie{tie(a, 900), tie(b, 901)}, []string{"600:reparented,owner-dead"}, 1},
		{"B's claim first", []Tie{tie(b, 901), tie(a, 900)}, []string{"600:reparented,owner-dead"}, 0},
		{"control: A's claim alone", []Tie{tie(a, 900)}, []string{"600:reparented,untracked"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(shell), testConfig)
			r.ApplyTies(tt.ties)
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Fatalf("findings %v, want %v", g, tt.want)
			}
			if f := r.Findings[0]; f.OwnerPID != 0 && f.OwnerPID != 901 {
				t.Errorf("owner pid %d, want B's claude 901", f.OwnerPID)
			}
			if len(r.Ignored) != tt.ignored || tt.ignored > 0 && r.Ignored[0].Speaker != a {
				t.Errorf("ignored %+v, want A's claim counted %d times", r.Ignored, tt.ignored)
			}
		})
	}
}

// The PATH tie at adversarial sizes: nine daemons' marks (nine Codex
// users, or one user's nine records) and orphans whose PATH is one 130 KB
// entry of /a/a/…, and a mark of the same shape. Each entry is walked once
// through the marks' directories; the answer is the naive one's (the
// control: an entry that does begin with a mark is tied).
func TestTieInListAdversarial(t *testing.T) {
	deep := strings.Repeat("/a", 65<<10) // 130 KB, 65,536 components
	var ties []Tie
	for i := range 9 {
		ties = append(ties, Tie{Env: "PATH", Value: fmt.Sprintf("/home/u%d/.codex/packages/app-server-daemon/", i), InList: true, Strong: "PATH",
			Speaker: 1000, Owner: ledger.Owner{Name: "codex-daemon", PID: 4000 + i}, Where: "Codex home", Proof: "the daemon pid file", Noun: "codex daemon"})
	}
	ties = append(ties, Tie{Env: "PATH", Value: deep[:4096] + "/", InList: true, Strong: "PATH", Speaker: 1000,
		Owner: ledger.Owner{Name: "codex-daemon", PID: 4999}, Where: "Codex home", Proof: "the daemon pid file", Noun: "codex daemon"})
	var procs []platform.Process
	for i := range 100 {
		procs = append(procs, p(1000+i, 1, "srv", []string{"srv"}, []string{"PATH=" + deep + ":" + deep}, "/"))
	}
	procs = append(procs, p(2000, 1, "srv", []string{"srv"}, []string{"PATH=/usr/bin:/home/u3/.codex/packages/app-server-daemon/bin"}, "/"))
	r := scanTable(snapshot(procs...), testConfig)
	r.ApplyTies(ties)
	owned := 0
	for _, f := range r.Findings {
		switch {
		case f.Root.PID == 2000 && f.OwnerPID != 4003:
			t.Errorf("the control is tied to %d, want 4003", f.OwnerPID)
		case f.Root.PID < 2000 && f.OwnerPID != 4999:
			t.Errorf("pid %d tied to %d, want the deep mark's 4999 (its entry begins with it)", f.Root.PID, f.OwnerPID)
		}
		if f.OwnerPID != 0 {
			owned++
		}
	}
	if owned != 101 {
		t.Errorf("%d findings tied, want 101", owned)
	}
}

// BenchmarkTieInListAdversarial is the cost of tying one orphan whose
// PATH holds two 130 KB entries of /a/a/… against ten marks, one of them
// 4 KiB deep (scripts: go test ./scan -bench TieInList).
func BenchmarkTieInListAdversarial(b *testing.B) {
	deep := strings.Repeat("/a", 65<<10)
	var ties []Tie
	for i := range 9 {
		ties = append(ties, Tie{Env: "PATH", Value: fmt.Sprintf("/home/u%d/.codex/packages/app-server-daemon/", i), InList: true, Strong: "PATH", Speaker: 1000})
	}
	ties = append(ties, Tie{Env: "PATH", Value: deep[:4096] + "/", InList: true, Strong: "PATH", Speaker: 1000})
	idx := indexTies(ties, listForm{':', '/'})
	s := snapshot(p(1000, 1, "srv", []string{"srv"}, []string{"PATH=" + deep + ":" + deep}, "/"))
	proc := s.Get(1000)
	for b.Loop() {
		idx.candidates(s, proc)
	}
}

package scan

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// as gives a process another real uid.
func as(uid uint32, p platform.Process) platform.Process {
	p.UID = uid
	return p
}

// TestUsersSpeakOnlyForThemselves: every claim of a user's state is about
// that user's processes only. Each case has its control: the same claim
// made by root's state (speaker 0), or by the process's own user, holds.
func TestUsersSpeakOnlyForThemselves(t *testing.T) {
	const user = 1001
	daemon := as(0, p(300, 1, "systemd-udevd", []string{"/lib/systemd/systemd-udevd"}, nil, "/system.slice/systemd-udevd.service"))
	worker := as(0, p(310, 305, "worker", []string{"/usr/sbin/worker"}, nil, "/"))
	rootParent := as(0, p(305, 1, "master", []string{"/usr/sbin/master"}, nil, "/"))
	usersGateway := as(user, p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/"))
	leaseHolder := as(0, p(320, 1, "node", []string{"node", "w.mjs", "--openclaw-acpx-lease-id", "L1"}, nil, "/"))
	registry := func(speaker uint32, owner int, child platform.Process) *ledger.Ledger {
		return &ledger.Ledger{Version: 1, Source: "codex/app-server-processes", Speaker: speaker,
			Owner: ledger.Owner{Name: "openclaw-gateway", PID: owner, Start: id(owner)},
			Runs:  []ledger.Run{{ID: "codex", Kind: ledger.KindACP, PID: child.PID, Start: id(child.PID), State: ledger.RunRunning}}}
	}
	tests := []struct {
		name     string
		procs    []platform.Process
		l        *ledger.Ledger
		findings []string
		statuses []string
		ignored  int
	}{
		{
			name:     "1: a user's registry row naming a root daemon, its parent dead: nothing",
			procs:    []platform.Process{daemon},
			l:        registry(user, 250, daemon),
			findings: nil, // udevd's parent is PID 1 but it is a service, started there: no finding at all
			statuses: []string{"codex:foreign"},
			ignored:  1,
		},
		{
			name:     "1: … a worker under a live root parent: nothing",
			procs:    []platform.Process{rootParent, worker},
			l:        registry(user, 250, worker),
			findings: []string{"305:reparented,untracked"}, // the master's own tree, as without the row
			statuses: []string{"codex:foreign"},
			ignored:  1,
		},
		{
			name:     "1 control: the same row in root's state makes the worker owner-dead",
			procs:    []platform.Process{rootParent, worker},
			l:        registry(0, 250, worker),
			findings: []string{"305:reparented,untracked", "310:owner-dead"},
			statuses: []string{"codex:orphaned"},
		},
		{
			name:     "2: a user's row with a live parent of theirs does not make a root orphan owned",
			procs:    []platform.Process{usersGateway, as(0, p(330, 1, "claude", []string{"claude"}, nil, "/"))},
			l:        registry(user, 200, as(0, p(330, 1, "claude", nil, nil, "/"))),
			findings: []string{"330:reparented,untracked"},
			statuses: []string{"codex:foreign"},
			ignored:  1,
		},
		{
			name:     "2 control: the same row about the user's own orphan owns it",
			procs:    []platform.Process{usersGateway, as(user, p(330, 1, "claude", []string{"claude"}, nil, "/"))},
			l:        registry(user, 200, as(user, p(330, 1, "claude", nil, nil, "/"))),
			statuses: []string{"codex:alive"},
		},
		{
			name:  "3: a user's closed lease naming a root process by its argv token: nothing",
			procs: []platform.Process{leaseHolder},
			l: &ledger.Ledger{Version: 1, Source: "acpx", Speaker: user, Owner: ledger.Owner{Name: "openclaw-gateway", Gone: "older than the lock"},
				Runs: []ledger.Run{{ID: "L1", PID: 320, State: ledger.RunDone, ArgvProof: [2]string{"--openclaw-acpx-lease-id", "L1"}}}},
			findings: []string{"320:reparented,untracked"},
			statuses: []string{"L1:foreign"},
			ignored:  1,
		},
		{
			name:  "3 control: the same lease about the user's own wrapper: run-done",
			procs: []platform.Process{as(user, leaseHolder)},
			l: &ledger.Ledger{Version: 1, Source: "acpx", Speaker: user, Owner: ledger.Owner{Name: "openclaw-gateway", Gone: "older than the lock"},
				Runs: []ledger.Run{{ID: "L1", PID: 320, State: ledger.RunDone, ArgvProof: [2]string{"--openclaw-acpx-lease-id", "L1"}}}},
			findings: []string{"320:reparented,owner-dead,run-done"},
			statuses: []string{"L1:orphaned"},
		},
		{
			name: "an owner pid that is another user's live process is a reused pid: owner-dead",
			procs: []platform.Process{as(user+1, p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")),
				as(user, p(340, 10, "bash", []string{"bash"}, nil, "/"))},
			l: &ledger.Ledger{Version: 1, Source: "locks", Speaker: user, Owner: ledger.Owner{Name: "openclaw-gateway", PID: 200, Start: id(200)},
				Runs: []ledger.Run{{ID: "r", PID: 340, Start: id(340), State: ledger.RunRunning}}},
			findings: []string{"340:reparented,owner-dead"},
			statuses: []string{"r:orphaned"},
		},
		{
			name: "control: an owner pid that is root's live process, started as recorded, is the owner (a user's client under sudo)",
			procs: []platform.Process{as(0, p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")),
				as(user, p(340, 10, "bash", []string{"bash"}, nil, "/"))},
			l: &ledger.Ledger{Version: 1, Source: "locks", Speaker: user, Owner: ledger.Owner{Name: "openclaw-gateway", PID: 200, Start: id(200)},
				Runs: []ledger.Run{{ID: "r", PID: 340, Start: id(340), State: ledger.RunRunning}}},
			statuses: []string{"r:alive"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(tt.procs...), testConfig)
			r.ApplyLedgers([]*ledger.Ledger{tt.l})
			if g := got(r); !reflect.DeepEqual(g, tt.findings) {
				t.Errorf("findings %q, want %q", g, tt.findings)
			}
			if g := statuses(r); !reflect.DeepEqual(g, tt.statuses) {
				t.Errorf("ledger statuses %q, want %q", g, tt.statuses)
			}
			n := 0
			for _, ig := range r.Ignored {
				n += ig.Count
				if !strings.Contains(ig.String(), "state of uid 1001") || !strings.Contains(ig.String(), "ignored") {
					t.Errorf("ignored says %q", ig)
				}
			}
			if n != tt.ignored {
				t.Errorf("%d claims ignored (%v), want %d", n, r.Ignored, tt.ignored)
			}
		})
	}
}

// TestGatewayLockSpeaksForItsOwner (9): a user's gateway lock does not make
// a root process that names the user's state dir owner-dead; the user's
// own survivor is.
func TestGatewayLockSpeaksForItsOwner(t *testing.T) {
	const user = 1001
	gw := gatewayTies("/home/a/.openclaw", false, user, ledger.Owner{Name: "openclaw-gateway", PID: 250, Start: id(250)},
		"/home/a/.openclaw/gateway.lock", time.Time{})
	env := []string{"OPENCLAW_SHELL=exec", "OPENCLAW_STATE_DIR=/home/a/.openclaw"}
	for _, tt := range []struct {
		uid  uint32
		want []string
	}{
		{0, []string{"300:reparented,untracked"}},
		{user, []string{"300:reparented,owner-dead"}}, // the control
	} {
		r := scanTable(snapshot(as(tt.uid, p(300, 10, "bash", []string{"bash"}, env, "/"))), testConfig)
		r.ApplyTies(gw)
		if g := got(r); !reflect.DeepEqual(g, tt.want) {
			t.Errorf("uid %d: findings %q, want %q", tt.uid, g, tt.want)
		}
	}
}

// TestConfiguredServerSpeaksForItsOwner: a user's openclaw.json naming a
// root process's command line does not make it kind mcp.
func TestConfiguredServerSpeaksForItsOwner(t *testing.T) {
	srv := Server{Name: "x", Command: "/usr/sbin/daemon", File: "/home/a/.openclaw/openclaw.json", UID: 1001}
	for _, tt := range []struct {
		uid  uint32
		want Kind
	}{{0, KindOther}, {1001, KindMCP}} {
		r := scanTable(snapshot(as(tt.uid, p(300, 10, "daemon", []string{"/usr/sbin/daemon"}, nil, "/"))), testConfig)
		r.ApplyServers([]Server{srv})
		if len(r.Findings) != 1 || r.Findings[0].Kind != tt.want {
			t.Errorf("uid %d: %+v, want kind %s", tt.uid, r.Findings, tt.want)
		}
	}
}

// TestGatewayTieByStateDirAlone: an ACP adapter carries only the gateway's
// OPENCLAW_STATE_DIR; it is the dead gateway's survivor when it started
// after that gateway took its lock, and not when it is older (a user's
// shell may export the variable too).
func TestGatewayTieByStateDirAlone(t *testing.T) {
	env := []string{"OPENCLAW_STATE_DIR=/srv/oc"}
	for _, tt := range []struct {
		name    string
		created time.Time
		want    []string
	}{
		{"started after the lock", time.Unix(-1e6, 0), []string{"300:reparented,owner-dead"}},
		{"older than the lock (control)", time.Unix(1e6, 0), []string{"300:reparented,untracked"}},
	} {
		gw := gatewayTies("/srv/oc", false, 1000, ledger.Owner{Name: "openclaw-gateway", PID: 250, Start: id(250)},
			"/srv/oc/gateway.lock", tt.created)
		r := scanTable(snapshot(p(300, 10, "node", []string{"node", "claude-agent-acp"}, env, "/")), testConfig)
		r.ApplyTies(gw)
		if g := got(r); !reflect.DeepEqual(g, tt.want) {
			t.Errorf("%s: findings %q, want %q", tt.name, g, tt.want)
		}
	}
}

// TestApplyLeaders: a root carrying a client's leader mark is that
// client's by the process group it kept: owner-dead when the group's
// leader is gone or a zombie, its live leader's leak otherwise, the
// client's without proof when it leads its own group. The control: the
// same orphan without the mark stays untracked.
func TestApplyLeaders(t *testing.T) {
	cfg := testConfig
	cfg.Marks.Leaders = []LeaderMark{{Env: "GEMINI_CLI", Owner: "gemini-cli"}, {Env: "OPENCODE_PID", Owner: "opencode", PIDEnv: true}}
	orphan := func(pgid int, env ...string) platform.Process {
		pr := p(300, 1, "node", []string{"node", "stubborn-server.js"}, env, "/")
		pr.PGID, pr.SID = pgid, 240 // a job of a login shell's session
		return pr
	}
	setsid := orphan(250, "GEMINI_CLI=1")
	setsid.SID = 250
	leader := p(250, 10, "node", []string{"node", "gemini"}, nil, "/")
	dead := zombie(250, 10)
	for _, tt := range []struct {
		name     string
		procs    []platform.Process
		want     []string
		evidence string
	}{
		{"the leader is gone", []platform.Process{orphan(250, "GEMINI_CLI=1")}, []string{"300:reparented,owner-dead"}, "its leader, gemini-cli pid 250, is gone"},
		{"the leader is a zombie", []platform.Process{dead, orphan(250, "GEMINI_CLI=1")}, []string{"300:reparented,owner-dead"}, "has exited (zombie)"},
		{"the leader lives", []platform.Process{leader, orphan(250, "GEMINI_CLI=1")}, []string{"300:reparented"}, "left behind by its live leader pid 250"},
		{"a group of its own", []platform.Process{orphan(300, "GEMINI_CLI=1")}, []string{"300:reparented"}, "it leads its own process group"},
		{"the group is its session's", []platform.Process{setsid}, []string{"300:reparented"}, "is not shown to be gemini-cli"},
		{"the mark names the leader", []platform.Process{func() platform.Process {
			q := setsid
			return q.WithDetails([]string{"node", "s.js"}, []string{"OPENCODE_PID=250"}, platform.Cgroup{})
		}()}, []string{"300:reparented,owner-dead"}, "its leader, opencode pid 250, is gone"},
		{"control: no mark", []platform.Process{orphan(250)}, []string{"300:reparented,untracked"}, "no owner's marker"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := Scan(snapshot(tt.procs...), cfg, nil)
			// (the live leader, under systemd --user, is a finding of its own)
			r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool { return f.Root.PID != 300 })
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Fatalf("findings %v, want %v", g, tt.want)
			}
			if ev := strings.Join(r.Findings[0].Evidence, "\n"); !strings.Contains(ev, tt.evidence) {
				t.Errorf("evidence %q lacks %q", ev, tt.evidence)
			}
		})
	}
}

// TestApplyLeadersWindows: Windows keeps no process groups, so a leader
// mark names its client and nothing more there, and says why; the
// control is TestApplyLeaders' "a group of its own", Unix's wording.
func TestApplyLeadersWindows(t *testing.T) {
	cfg := testConfig
	cfg.Marks.Leaders = []LeaderMark{{Env: "GEMINI_CLI", Owner: "gemini-cli"}}
	created := time.Unix(36000, 0)
	s := platform.WindowsSnapshot([]platform.WinProc{{PID: 300, PPID: 250, Created: created, Image: "node.exe", UID: 1001,
		Cmdline: `node.exe stubborn-server.js`, Env: []string{"GEMINI_CLI=1"}}}, created.Add(time.Hour), created.Add(-time.Hour), nil)
	r, _ := Scan(s, cfg, nil)
	if len(r.Findings) != 1 || r.Findings[0].Owner != "gemini-cli" || r.Findings[0].Has(OwnerDead) || r.Findings[0].Has(Untracked) {
		t.Fatalf("findings %v, want 300 gemini-cli's, not owner-dead", got(r))
	}
	if ev := strings.Join(r.Findings[0].Evidence, "\n"); !strings.Contains(ev, "Windows keeps no process groups") {
		t.Errorf("evidence %q does not say why the client is not known", ev)
	}
}

// TestTieInList: a tie on a list-valued variable holds when an entry of
// the list begins with its directory, found through the index by the
// entry's leading directories; an entry that only contains it does not
// (the control), nor does another user's directory.
func TestTieInList(t *testing.T) {
	dir := "/home/a/.codex/packages/app-server-daemon/"
	tie := Tie{Env: "PATH", Value: dir, InList: true, Strong: "PATH", Speaker: 1000,
		Owner: ledger.Owner{Name: "codex-daemon", PID: 4242}, Where: "Codex home /home/a/.codex", Proof: "the daemon pid file", Noun: "codex daemon"}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/usr/bin:" + dir + "releases/1/codex-path:/bin", []string{"300:reparented,owner-dead"}},
		{"/usr/bin:/x" + dir + "releases/1/codex-path", []string{"300:reparented,untracked"}}, // control
		{"/usr/bin:/home/b/.codex/packages/app-server-daemon/releases/1", []string{"300:reparented,untracked"}},
	} {
		r := scanTable(snapshot(p(300, 10, "srv", []string{"srv"}, []string{"PATH=" + tc.path}, "/")), testConfig)
		r.ApplyTies([]Tie{{Env: "OTHER", Value: "x"}, tie})
		if g := got(r); !reflect.DeepEqual(g, tc.want) {
			t.Errorf("PATH %s: findings %v, want %v", tc.path, g, tc.want)
		}
	}
}

// TestTieInListWindows: on a Windows table a PATH is ';'-separated and
// its directories '\'-separated, so the tie holds on C:\…;C:\… entries;
// the same entry spelt for Unix (the control) and an entry that only
// contains the directory do not. Split by ':' and '/', as for every other
// table, the first case was untracked: "C:" was an entry.
func TestTieInListWindows(t *testing.T) {
	dir := `C:\Users\a\.codex\packages\app-server-daemon\`
	tie := Tie{Env: "Path", Value: dir, InList: true, Strong: "Path", Speaker: 1001,
		Owner: ledger.Owner{Name: "codex-daemon", PID: 4242}, Where: `Codex home C:\Users\a\.codex`, Proof: "the daemon pid file", Noun: "codex daemon"}
	created := time.Unix(36000, 0)
	for _, tc := range []struct {
		path string
		tied bool
	}{
		{`C:\WINDOWS\system32;` + dir + `releases\1\codex-path;C:\Program Files\nodejs\`, true},
		{`C:\WINDOWS\system32;D:\x` + dir + `releases\1\codex-path`, false},
		{"/usr/bin:/home/a/.codex/packages/app-server-daemon/releases/1/codex-path", false},
	} {
		// 300 is a server whose client, 290, is gone: an orphan by the
		// Windows sign.
		s := platform.WindowsSnapshot([]platform.WinProc{{PID: 300, PPID: 290, Created: created, Image: "node.exe", UID: 1001,
			Cmdline: `node.exe C:\srv\index.js`, Env: []string{"Path=" + tc.path}}}, created.Add(time.Hour), created.Add(-time.Hour), nil)
		r := scanTable(s, testConfig)
		if len(r.Findings) != 1 || !r.Findings[0].Has(Untracked) {
			t.Fatalf("Path %s: findings %v before the tie, want 300 untracked", tc.path, got(r))
		}
		r.ApplyTies([]Tie{tie})
		if tied := r.Findings[0].Has(OwnerDead); tied != tc.tied {
			t.Errorf("Path %s: tied (owner-dead) %v, want %v; findings %v", tc.path, tied, tc.tied, got(r))
		}
	}
}

// A finding says whose word attributes it (Finding.Speakers): a ledger's
// speaker for the run it proves, a tie's for the root it ties, and the
// root's own uid for a marker in its environment. A finding nothing
// attributes has no speaker (the control), so a rule's "@evidence" reaches
// no one for it.
func TestFindingSpeakers(t *testing.T) {
	const user = 1001
	proven := as(user, p(400, 1, "bash", []string{"bash", "-c", "make"}, nil, "/"))
	tied := as(user, p(410, 1, "bash", []string{"bash"}, []string{"OPENCLAW_STATE_DIR=/home/u/.openclaw"}, "/"))
	marked := as(user, p(420, 1, "node", []string{"node", "x"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=999"}, "/"))
	bare := as(user, p(430, 1, "sleep", []string{"sleep", "60"}, nil, "/"))
	r := scanTable(snapshot(proven, tied, marked, bare), testConfig)
	l := gwLedger(999, "boot:1", nil, run("r", 400, id(400), ledger.RunRunning, ""))
	l.Speaker = user
	r.ApplyLedgers([]*ledger.Ledger{l})
	r.ApplyTies(gatewayTies("/home/u/.openclaw", false, user, ledger.Owner{Name: "openclaw-gateway", PID: 999, Start: id(999)},
		"/home/u/.openclaw/gateway.lock", time.Unix(-1e6, 0)))
	got := map[int][]uint32{}
	for _, f := range r.Findings {
		got[f.Root.PID] = f.Speakers
	}
	want := map[int][]uint32{400: {user}, 410: {user}, 420: {user}, 430: nil}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("speakers %v, want %v", got, want)
	}
}

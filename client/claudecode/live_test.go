package claudecode

// The leaks under a live claude: its Bash tool's jobs (jobs.go) and the
// servers it superseded (supersede.go).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// TestBashJobPIDMark: CLAUDE_PID on a Bash-tool job names its claude: the
// pid gone, a zombie or another process proves the session over.
func TestBashJobPIDMark(t *testing.T) {
	clienttest.PIDMarkCases(t, Client, filepath.Join(home(t), ".claude"), EnvPID, OwnerName)
}

// job is a Bash-tool job of claude pid 700, session s-1, left by `cmd &`:
// reparented, in the group and session of its tool's shell (810), gone.
func job(uid uint32, env ...string) platform.Process {
	p := clienttest.Proc(820, 1, 810, uid, []string{"sh", "-c", "yes > /dev/null"},
		append([]string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-1"}, env...))
	p.SID = 810
	return p
}

// TestBashJobAfterExit: the job's group is its session's, so the group
// says nothing of claude (the leader mark alone attributed it, unproven);
// its CLAUDE_PID gone proves it owner-dead, and the pid mark is asked
// first. Without CLAUDE_PID (before 2.1.3xx) it stays unproven.
func TestBashJobAfterExit(t *testing.T) {
	const uid = 1000
	dir := filepath.Join(home(t), ".claude")
	for _, tc := range []struct {
		name string
		env  []string
		dead bool
	}{
		{"CLAUDE_PID gone", []string{"CLAUDE_PID=700"}, true},
		{"control: no CLAUDE_PID", nil, false},
	} {
		f := clienttest.Finding(clienttest.Scan(t, Client, dir, uid, job(uid, tc.env...)), 820)
		if f == nil || f.Has(scan.OwnerDead) != tc.dead || f.Owner != OwnerName {
			t.Errorf("%s: %+v; want owner-dead %v, owner %s", tc.name, f, tc.dead, OwnerName)
			continue
		}
		t.Logf("%s: %q", tc.name, f.Evidence)
	}
}

// transcript writes session s-1's transcript for cwd /w: a Bash tool call
// made at use and answered at result, among lines of other kinds.
func transcript(t *testing.T, h string, use, result time.Time) {
	t.Helper()
	dir := filepath.Join(h, ".claude", "projects", "-w")
	os.MkdirAll(dir, 0o700)
	line := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) + "\n" }
	ts := func(at time.Time) string { return at.UTC().Format(time.RFC3339Nano) }
	body := line(map[string]any{"type": "user", "timestamp": ts(use.Add(-time.Second)), "message": map[string]any{"role": "user", "content": "start the job"}}) +
		line(map[string]any{"type": "assistant", "timestamp": ts(use), "message": map[string]any{"content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_7", "name": "Bash", "input": map[string]any{"command": "yes > /dev/null &"}}}}}) +
		"not json\n" +
		line(map[string]any{"type": "user", "timestamp": ts(result), "message": map[string]any{"content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_7", "content": "(Bash completed with no output)"}}}})
	os.WriteFile(filepath.Join(dir, "s-1.jsonl"), []byte(body), 0o600)
}

// TestBashJobAdvice: a job of a live claude whose session file this dir
// holds is reported as tool-call-ended, naming the tool call its start
// falls in. The controls: its claude gone (owner-dead: no advice), a job
// of another user, an MCP server (no CLAUDE_PID), a claude this dir has
// no session of.
func TestBashJobAdvice(t *testing.T) {
	const uid = 1000
	h := home(t, Session{PID: 700, SessionID: "s-1", StartedAt: clienttest.Taken.Add(-10*time.Hour + 700*time.Second).UnixMilli(), ProcStart: "70000"})
	started := clienttest.Taken.Add(-10*time.Hour + 820*time.Second) // job's StartTicks 82000, at 100 Hz
	transcript(t, h, started.Add(-300*time.Millisecond), started.Add(200*time.Millisecond))
	claude := clienttest.Proc(700, 500, 700, uid, []string{"claude"}, nil)
	other := clienttest.Proc(701, 500, 701, uid, []string{"claude"}, nil)
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		want  bool
	}{
		{"the session lives", []platform.Process{claude, job(uid, "CLAUDE_PID=700")}, true},
		{"control: its claude gone", []platform.Process{job(uid, "CLAUDE_PID=700")}, false},
		{"control: another user's job", []platform.Process{claude, job(uid+1, "CLAUDE_PID=700")}, false},
		{"control: an MCP server", []platform.Process{claude, job(uid)}, false},
		{"control: a claude with no session here", []platform.Process{claude, other, job(uid, "CLAUDE_PID=701")}, false},
	} {
		_, got := clienttest.Advise(t, Client, filepath.Join(h, ".claude"), uid, "tool-call-ended", tc.procs...)
		if (len(got) == 1) != tc.want || len(got) > 1 {
			t.Errorf("%s: advice %q; want %v", tc.name, got, tc.want)
			continue
		}
		if tc.want {
			for _, w := range []string{"pid 820 ", "live claude pid 700", "session s-1", `tool call toolu_7 ("yes > /dev/null &"), which ended`} {
				if !strings.Contains(got[0], w) {
					t.Errorf("%s: the advice does not say %q: %s", tc.name, w, got[0])
				}
			}
			t.Logf("%s: %s", tc.name, got[0])
		}
	}
}

// TestToolCallsBounded: only the transcript's last transcriptTail bytes are
// read (the line the seek cut is skipped), and at most maxToolCalls calls
// are kept, the last ones.
func TestToolCallsBounded(t *testing.T) {
	var b bytes.Buffer
	call := func(i int) {
		fmt.Fprintf(&b, `{"timestamp":"2026-11-26T10:00:%02dZ","message":{"content":[{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"c%d &"}}]}}`+"\n", i%60, i, i)
	}
	call(0) // before the tail: not read
	b.WriteString(`{"pad":"` + strings.Repeat("x", transcriptTail) + `"}` + "\n")
	for i := 1; i <= maxToolCalls+5; i++ {
		call(i)
	}
	calls := toolCalls(bytes.NewReader(b.Bytes()), "s")
	if len(calls) != maxToolCalls || calls[0].ID != fmt.Sprintf("toolu_%d", 6) || calls[len(calls)-1].ID != fmt.Sprintf("toolu_%d", maxToolCalls+5) {
		t.Errorf("%d calls, first %+v; want the last %d", len(calls), calls[0], maxToolCalls)
	}
	long := `{"timestamp":"2026-11-26T10:00:00Z","message":{"content":[{"type":"tool_use","id":"toolu_x","name":"Bash","input":{"command":"` + strings.Repeat("y", 5000) + `"}}]}}`
	if calls := toolCalls(strings.NewReader(long+"\n"), "s"); len(calls) != 1 || len(calls[0].Command) > maxCommand+len("…") {
		t.Errorf("a long command: %+v", calls)
	}
}

// boot is when the made-up table's machine booted: a process's start is
// boot + StartTicks/100 s.
var boot = clienttest.Taken.Add(-10 * time.Hour)

// superHome makes a home whose claude pid 700 (started at tick 70000)
// runs session s-1 in a project whose .mcp.json declares edited (version
// current) and same; the MCP log of edited has the events given.
func superHome(t *testing.T, current string, events ...string) string {
	t.Helper()
	h := t.TempDir()
	work := filepath.Join(h, "work")
	sessions := filepath.Join(h, ".claude", "sessions")
	os.MkdirAll(work, 0o700)
	os.MkdirAll(sessions, 0o700)
	b, _ := json.Marshal(map[string]any{"pid": 700, "sessionId": "s-1", "cwd": work, "startedAt": boot.Add(700 * time.Second).UnixMilli(), "procStart": "70000"})
	os.WriteFile(filepath.Join(sessions, "700.json"), b, 0o600)
	os.WriteFile(filepath.Join(h, ".claude.json"), []byte(`{}`), 0o600)
	b, _ = json.Marshal(map[string]any{"mcpServers": map[string]any{
		"edited": map[string]any{"command": "node", "args": []string{"/srv/edited.js", current}},
		"same":   map[string]any{"command": "node", "args": []string{"/srv/same.js"}},
	}})
	os.WriteFile(filepath.Join(work, ".mcp.json"), b, 0o600)
	logs := filepath.Join(h, cacheRel(), projectSlug(work), "mcp-logs-edited")
	os.MkdirAll(logs, 0o700)
	var body strings.Builder
	for _, e := range events {
		at, msg, _ := strings.Cut(e, " ")
		var secs int
		fmt.Sscan(at, &secs)
		b, _ := json.Marshal(map[string]any{"debug": msg, "timestamp": boot.Add(time.Duration(secs) * time.Second).UTC().Format(time.RFC3339Nano), "sessionId": "s-1", "cwd": work})
		body.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(logs, "2026-11-26T10-00-00-000Z.jsonl"), []byte(body.String()), 0o600)
	return h
}

// child is a server claude (700) started at second at, in session s-1.
func child(pid int, uid uint32, at int, argv ...string) platform.Process {
	p := clienttest.Proc(pid, 700, 700, uid, argv, []string{"CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID=s-1"})
	p.StartTicks = uint64(at) * 100
	return p
}

// TestSuperseded: the old copy of an edited and reconnected server is a
// finding of its own, superseded, under the live claude, when the log and
// the table agree; each control breaks one leg of the proof.
func TestSuperseded(t *testing.T) {
	const uid = 1000
	claude := clienttest.Proc(700, 500, 700, uid, []string{"claude"}, nil)
	old := child(710, uid, 710, "node", "/srv/edited.js", "v1")
	same := child(711, uid, 710, "node", "/srv/same.js")
	current := child(760, uid, 760, "node", "/srv/edited.js", "v2")
	started := []string{"710 Starting connection with timeout of 30000ms", "710 Successfully connected", "760 Starting connection with timeout of 30000ms"}
	for _, tc := range []struct {
		name    string
		current string
		events  []string
		procs   []platform.Process
		want    bool
	}{
		{"edited and reconnected", "v2", started, []platform.Process{claude, old, same, current}, true},
		{"control: claude stopped the old copy (an unchanged entry)", "v2",
			[]string{started[0], "759 Sending SIGINT to MCP server process", "759 MCP server process exited cleanly", started[2]}, []platform.Process{claude, old, same, current}, false},
		{"control: the old copy is still an entry's", "v1", started, []platform.Process{claude, old, same, current}, false},
		{"control: no new copy running the current entry", "v3", started, []platform.Process{claude, old, same, current}, false},
		{"control: the later start under the hold", "v2", []string{started[0], "35999 Starting connection"},
			[]platform.Process{claude, old, same, child(760, uid, 35999, "node", "/srv/edited.js", "v2")}, false},
		{"control: two copies it could be", "v2", started, []platform.Process{claude, old, child(712, uid, 711, "node", "/srv/other.js"), same, current}, false},
		{"control: the old copy another user's", "v2", started, []platform.Process{claude, child(710, uid+1, 710, "node", "/srv/edited.js", "v1"), same, current}, false},
		{"control: claude not the session's (another start)", "v2", started, []platform.Process{func() platform.Process { c := claude; c.StartTicks = 69000; return c }(), old, same, current}, false},
		{"control: claude gone (its servers reparented)", "v2", started, []platform.Process{old, same, current}, false},
	} {
		h := superHome(t, tc.current, tc.events...)
		r := clienttest.Scan(t, Client, filepath.Join(h, ".claude"), uid, tc.procs...)
		f := clienttest.Finding(r, 710)
		got := f != nil && f.Has(scan.Superseded)
		if got != tc.want {
			t.Errorf("%s: superseded %v, want %v: %+v", tc.name, got, tc.want, f)
			continue
		}
		if got {
			if len(f.Members) != 1 || f.Owner != OwnerName || f.OwnerPID != 700 || f.Kind != scan.KindMCP {
				t.Errorf("%s: the finding is %d processes, owner %s %d, kind %s; want the old copy alone, claude-code's, mcp", tc.name, len(f.Members), f.Owner, f.OwnerPID, f.Kind)
			}
			t.Logf("%s: %q", tc.name, f.Evidence)
		}
		for _, g := range r.Findings {
			if g.Root.PID == 700 || g.Root.PID == 760 || g.Root.PID == 711 {
				t.Errorf("%s: a finding rooted at %d: %+v", tc.name, g.Root.PID, g)
			}
		}
	}
}

// TestMCPLogBounded: of a log, only its last logTail bytes are read, and
// only the session's lines; an exhausted budget reads nothing.
func TestMCPLogBounded(t *testing.T) {
	dir := t.TempDir()
	line := func(at, session, msg string) string {
		b, _ := json.Marshal(map[string]any{"debug": msg, "timestamp": at, "sessionId": session})
		return string(b) + "\n"
	}
	body := line("2026-11-26T10:00:00Z", "s-1", "Starting connection with timeout of 30000ms") + // before the tail
		`{"pad":"` + strings.Repeat("x", logTail) + `"}` + "\n" +
		line("2026-11-26T10:00:01Z", "s-2", "Starting connection with timeout of 30000ms") + // another session's
		line("2026-11-26T10:00:02Z", "s-1", "Starting connection with timeout of 30000ms") +
		line("2026-11-26T10:00:03Z", "s-1", "Sending SIGINT to MCP server process")
	os.WriteFile(filepath.Join(dir, "log.jsonl"), []byte(body), 0o600)
	budget := int64(logBudget)
	ev := readLogEvents(dir, "log.jsonl", "s-1", os.Getuid(), &budget)
	if len(ev) != 2 || ev[0].Stop || !ev[1].Stop || budget != logBudget-logTail {
		t.Errorf("events %+v, budget left %d; want a start and a stop, %d read", ev, budget, logTail)
	}
	budget = 0
	if ev := readLogEvents(dir, "log.jsonl", "s-1", os.Getuid(), &budget); ev != nil {
		t.Errorf("an exhausted budget read %+v", ev)
	}
}

// BenchmarkReadLiveSessions: what a config dir with 16 live sessions costs
// a read, each session with a 5 MiB transcript (a Bash call every 4 KiB)
// and 8 servers' 1 MiB MCP logs, all past the read's bounds: the worst a
// user's live sessions can make it. (docs/performance.md)
func BenchmarkReadLiveSessions(b *testing.B) {
	h := b.TempDir()
	cfg := filepath.Join(h, ".claude")
	os.MkdirAll(filepath.Join(cfg, "sessions"), 0o700)
	os.WriteFile(filepath.Join(h, ".claude.json"), []byte(`{}`), 0o600)
	pad := `{"type":"attachment","x":"` + strings.Repeat("z", 4000) + `"}` + "\n"
	call := `{"timestamp":"2026-11-26T10:00:00Z","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"yes &"}}]}}` + "\n"
	for i := 0; i < maxTranscripts; i++ {
		id := fmt.Sprintf("s-%d", i)
		work := filepath.Join(h, "w", id)
		os.MkdirAll(work, 0o700)
		s, _ := json.Marshal(map[string]any{"pid": 1000 + i, "sessionId": id, "cwd": work, "startedAt": 1, "procStart": "1"})
		os.WriteFile(filepath.Join(cfg, "sessions", fmt.Sprintf("%d.json", 1000+i)), s, 0o600)
		os.MkdirAll(filepath.Join(cfg, "projects", projectSlug(work)), 0o700)
		os.WriteFile(filepath.Join(cfg, "projects", projectSlug(work), id+".jsonl"), []byte(strings.Repeat(pad+call, (5<<20)/len(pad+call))), 0o600)
		line := `{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-11-26T10:00:00Z","sessionId":"` + id + `"}` + "\n"
		for k := 0; k < 8; k++ {
			d := filepath.Join(h, cacheRel(), projectSlug(work), fmt.Sprintf("mcp-logs-srv%d", k))
			os.MkdirAll(d, 0o700)
			os.WriteFile(filepath.Join(d, "2026-11-26T10-00-00-000Z.jsonl"), []byte(strings.Repeat(line, (1<<20)/len(line))), 0o600)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		ReadRaw(cfg)
	}
}

// TestServerSets: a live claude running two copies of its configured
// server (a second set its session never stopped) is named, with the
// count and the memory; never a finding. The controls: one copy each,
// and a second copy younger than the hold (an SDK's probe copy on
// connect).
func TestServerSets(t *testing.T) {
	const uid = 1000
	dir := filepath.Join(home(t), ".claude")
	claude := clienttest.Proc(700, 1, 700, uid, []string{"claude"}, nil)
	srv := func(pid int, ticks uint64) platform.Process {
		p := clienttest.Proc(pid, 700, 700, uid, []string{"/opt/srv/stubborn", "--quiet"}, []string{"CLAUDECODE=1"})
		if ticks > 0 {
			p.StartTicks = ticks
		}
		return p
	}
	young := uint64(clienttest.Taken.Unix()-2) * 100 // two seconds before the table
	for _, tc := range []struct {
		name  string
		procs []platform.Process
		want  bool
	}{
		{"two sets", []platform.Process{claude, srv(710, 0), srv(720, 0)}, true},
		{"control: one set", []platform.Process{claude, srv(710, 0)}, false},
		{"control: a probe copy", []platform.Process{claude, srv(710, 0), srv(720, young)}, false},
	} {
		r, got := clienttest.Advise(t, Client, dir, uid, "mcp-server-sets", tc.procs...)
		if (len(got) == 1) != tc.want {
			t.Errorf("%s: advice %q, want %v", tc.name, got, tc.want)
			continue
		}
		if tc.want && (!strings.Contains(got[0], "runs 2 sets") || !strings.Contains(got[0], "1 copy beyond one set, 1 MiB") || !strings.Contains(got[0], "SHOULD NOT")) {
			t.Errorf("%s: %q", tc.name, got[0])
		}
		if f := clienttest.Finding(r, 720); f != nil {
			t.Errorf("%s: a live claude's server is a finding: %+v", tc.name, f)
		}
		t.Logf("%s: %q", tc.name, got)
	}
}

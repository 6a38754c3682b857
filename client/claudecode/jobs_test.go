package claudecode

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
		dir := filepath.Join(h, ".claude")
		snap := platform.NewSnapshot(append([]platform.Process{clienttest.Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}, tc.procs...), clienttest.Boot, 10*time.Hour, clienttest.Taken)
		ev, problems, _ := clienttest.Judge(Client, dir, uid, snap)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		r := clienttest.ScanSnapshot(t, Client, dir, uid, snap)
		r.Advise(ev.Advisers, nil)
		var got []string
		for _, a := range r.Advice {
			if a.ID == "tool-call-ended" {
				got = append(got, a.Evidence)
			}
		}
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

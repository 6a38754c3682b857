package realclients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// textAnswer is an Anthropic Messages event stream that ends the turn with
// text.
func textAnswer(text string) string {
	msg, _ := json.Marshal(text)
	events := []string{
		`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(msg) + `}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`,
	}
	return eventStream(events)
}

// TestRealClaudeBashJobs: Claude Code 2.1.331 (`claude -p`, the Bash tool
// allowed) is asked by the model stand-in to run `cmd &`. The tool call
// ends within a second; its job, reparented (to this test), runs on.
//
//   - While the session lives (the model's next answer held), the reap
//     with the example policy plans nothing of it: it is the live
//     session's own, and the scan reports it as an advice,
//     tool-call-ended, naming the tool call.
//   - The session over (claude answers and exits, its session file
//     deleted), the job still runs (the control); the reap kills it as
//     owner-dead by the claude pid it carries.
func TestRealClaudeBashJobs(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "cjmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	release := make(chan struct{})
	var once, done sync.Once
	model.Answer(func(body []byte) string {
		out := ""
		switch {
		case bytes.Contains(body, []byte(`"tool_result"`)) && bytes.Contains(body, []byte(mark)):
			<-release
			done.Do(func() { out = textAnswer("started " + mark) })
		case bytes.Contains(body, []byte(`"Bash"`)) && bytes.Contains(body, []byte(mark)):
			once.Do(func() { out = bashToolCall("sh -c 'sleep 300; true' " + mark + "-job >/dev/null 2>&1 &") })
		}
		return out
	})
	home, work := t.TempDir(), t.TempDir()
	env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
	claude, log := realclients.StartDetached(t, work, env, filepath.Join(mods, "claude-code-2.1.331", "claude"),
		"-p", "start the job "+mark, "--permission-mode", "default", "--allowedTools", "Bash")
	t.Cleanup(func() { realclients.KillOurs(mark) })
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var job int
	for deadline := time.Now().Add(90 * time.Second); job == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, pid := range realclients.MarkedPIDs(mark) {
			// The job itself, not the tool's shell that started it (its
			// command holds the same words, and it exits at once).
			if c := clitest.CmdlineOf(pid); strings.HasPrefix(c, "sh -c sleep 300; true ") && strings.Contains(c, mark+"-job") {
				job = pid
			}
		}
	}
	if job == 0 {
		b, _ := os.ReadFile(log)
		t.Fatalf("the Bash tool started no job: marked %v, requests %q\n%s", realclients.MarkedPIDs(mark), model.Requests(), clitest.Tail(b, 2000))
	}
	for deadline := time.Now().Add(30 * time.Second); clitest.ParentOf(job) != os.Getpid() && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	t.Logf("claude %d, live; its Bash tool's job %d %q: parent %d (this test), group %d", claude, job, clitest.CmdlineOf(job), clitest.ParentOf(job), clitest.PgidOf(job))
	if clitest.ParentOf(job) != os.Getpid() {
		t.Fatalf("the job %d was not reparented: parent %d", job, clitest.ParentOf(job))
	}

	// The session lives: reported (claude-tool-jobs), with the advice;
	// not signalled.
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
	f := rep.Finding(job)
	switch {
	case f == nil:
		t.Errorf("live session: no finding for the job %d\n%s", job, r.Stdout)
	case f.Rule != "claude-tool-jobs" || f.Outcome != "reported" || clitest.Contains(f.Reasons, "owner-dead"):
		t.Errorf("live session: the job %d is %s by %q, reasons %v, evidence %q; want reported by claude-tool-jobs", job, f.Outcome, f.Rule, f.Reasons, f.Evidence)
	default:
		t.Logf("live session: the job is %s by %s, reasons %v, evidence %q", f.Outcome, f.Rule, f.Reasons, f.Evidence)
	}
	if st := clitest.StateOf(job); st == "" || st == "Z" {
		t.Fatalf("live session: the reap ended the job %d", job)
	}
	var sr struct {
		Advice []struct{ ID, Evidence, Setting string } `json:"advice"`
	}
	scan := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", clitest.ExamplePolicy(t, mark))
	json.Unmarshal([]byte(scan.Stdout), &sr)
	advised := false
	for _, a := range sr.Advice {
		if a.ID == "tool-call-ended" && strings.Contains(a.Evidence, fmt.Sprintf("pid %d ", job)) {
			advised = true
			t.Logf("advice %s: %s", a.ID, a.Evidence)
			if !strings.Contains(a.Evidence, "toolu_01") || !strings.Contains(a.Evidence, fmt.Sprintf("live claude pid %d", claude)) {
				t.Errorf("the advice names neither the tool call toolu_01 nor claude %d: %s", claude, a.Evidence)
			}
		}
	}
	if !advised {
		t.Errorf("live session: no tool-call-ended advice for the job %d: %+v", job, sr.Advice)
	}

	// The session ends: claude answers and exits, its session file goes.
	releaseOnce.Do(func() { close(release) })
	var ws syscall.WaitStatus
	syscall.Wait4(claude, &ws, 0, nil)
	time.Sleep(time.Second)
	sessions, _ := filepath.Glob(filepath.Join(cfgDir, "sessions", "*.json"))
	t.Logf("claude exited (%v); session files %v; marked alive %v", ws, sessions, realclients.MarkedPIDs(mark))
	if st := clitest.StateOf(job); st == "" || st == "Z" {
		t.Fatalf("control: the job %d did not outlive its session", job)
	}
	var roots []int
	for _, pid := range realclients.MarkedPIDs(mark) {
		if clitest.ParentOf(pid) == os.Getpid() {
			roots = append(roots, pid)
		}
	}
	reapLeftovers(t, mark, roots)
	if st := clitest.StateOf(job); st != "" && st != "Z" {
		t.Errorf("the job %d is alive after the reap", job)
	}
}

package realclients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// bashToolCall is an Anthropic Messages event stream whose one content
// block calls Claude Code's Bash tool with command.
func bashToolCall(command string) string {
	input, _ := json.Marshal(map[string]any{"command": command, "description": "wait"})
	partial, _ := json.Marshal(string(input))
	events := []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":` + string(partial) + `}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}`,
		`{"type":"message_stop"}`,
	}
	return eventStream(events)
}

// eventStream is events (JSON objects with a type) as a server-sent event
// stream, each named by its type.
func eventStream(events []string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
	return b.String()
}

// TestRealClaudeCodeBashTool: Claude Code (`claude -p`, detached, the
// Bash tool allowed) is asked by the model stand-in to run a command that
// outlives it, and is SIGKILLed while the tool runs. The Bash tool's shell
// (`bash -c -l source …/shell-snapshots/snapshot-bash-….sh && … eval '…'`)
// and what it runs live on, reparented (the control); they carry Claude
// Code's marks and its group, and its session file names the dead pid: the
// reap kills the tree as owner-dead, kind exec. The command is `tail -f
// /dev/null`, not a standalone `sleep`: since 2.1.33x the tool refuses a
// foreground sleep of 25 s or more ("Blocked: … use run_in_background"),
// which ran nothing. On 2.1.197, the pinned 2.1.332, and 2.1.333, the
// newest platform package — the versions people run.
func TestRealClaudeCodeBashTool(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, v := range []struct{ name, dir string }{
		{"2.1.197", filepath.Join("@anthropic-ai", "claude-code-linux-x64")},
		{"2.1.332", "claude-code-2.1.332"},
		{"2.1.333", "claude-code-2.1.333"},
	} {
		t.Run(v.name, func(t *testing.T) { realClaudeBashTool(t, filepath.Join(mods, v.dir, "claude"), v.name) })
	}
}

func realClaudeBashTool(t *testing.T, bin, version string) {
	mark := "cbmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + strings.ReplaceAll(version, ".", "")
	model := realclients.StartModel(t)
	var once sync.Once
	model.Answer(func(body []byte) string {
		out := ""
		if bytes.Contains(body, []byte(`"Bash"`)) && bytes.Contains(body, []byte(mark)) {
			once.Do(func() { out = bashToolCall("tail -f /dev/null # " + mark + "-tool") })
		}
		return out
	})
	home, work := t.TempDir(), t.TempDir()
	env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
	claude, log := realclients.StartDetached(t, work, env, bin, "-p", "say hello "+mark, "--allowedTools=Bash")
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 3, model, log) // claude and two servers; then the tool's shell (its tail is not marked: the mark is a comment)
	var tool []int
	for deadline := time.Now().Add(clientDeadline()); len(tool) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, pid := range realclients.MarkedPIDs(mark) {
			if strings.Contains(clitest.CmdlineOf(pid), mark+"-tool") {
				tool = append(tool, pid)
			}
		}
	}
	sessions, _ := filepath.Glob(filepath.Join(cfgDir, "sessions", "*.json"))
	t.Logf("claude %s -p with the Bash tool: pid %d, the tool's processes %v, session files %v, requests %q", version, claude, tool, sessions, model.Requests())
	if len(tool) == 0 {
		b, _ := os.ReadFile(log)
		t.Fatalf("the Bash tool ran nothing marked: marked %v\n%s", realclients.MarkedPIDs(mark), clitest.Tail(b, 2000))
	}
	reapLive(t, mark, "claude -p, its Bash tool running")
	// What the tool runs is not marked (the mark is a comment): its
	// children are followed by pid.
	var runs []int
	for _, pid := range tool {
		runs = append(runs, clitest.ChildrenOf(pid)...)
	}

	left := killClient(claude, mark)
	var roots []int
	for _, pid := range left {
		if clitest.ParentOf(pid) == os.Getpid() {
			roots = append(roots, pid)
		}
	}
	var shell []int
	for _, pid := range left {
		if strings.Contains(clitest.CmdlineOf(pid), "shell-snapshots") {
			shell = append(shell, pid)
		}
	}
	t.Logf("claude SIGKILLed, no reaper: %d processes alive %v, reparented roots %v, the tool's shell %v", len(left), left, roots, shell)
	if len(shell) == 0 {
		t.Fatalf("control: the Bash tool's shell did not outlive claude: alive %v", left)
	}
	reapLeftovers(t, mark, roots)
	for _, pid := range runs {
		if st := clitest.StateOf(pid); st != "" && st != "Z" {
			t.Errorf("%d, which the Bash tool ran, is alive after the reap", pid)
		}
	}
	t.Logf("what the Bash tool ran, %v, is gone", runs)
}

package realclients

import (
	"bytes"
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

// TestRealReusedSandbox: a sandbox reused across tasks runs each task's
// agent, Claude Code 2.1.331 (`claude -p`), whose Bash tool leaves a job
// (`… &`), as agent runners do. Task 0 runs claude directly: its job, and
// the stubborn servers claude started, outlive it into the next task (the
// control). Tasks 1 and 2 run it under `reaper run`: when claude exits,
// run reaps what it left — the job and the servers, each proved — so task
// 2 starts with none of task 1's processes; task 0's leftovers, which
// were never run's, are untouched (no user-wide sweep).
func TestRealReusedSandbox(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "sbmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	var mu sync.Mutex
	called := map[string]bool{}
	model.Answer(func(body []byte) string {
		mu.Lock()
		defer mu.Unlock()
		for _, task := range []string{"task0", "task1", "task2"} {
			tag := mark + "-" + task
			switch {
			case bytes.Contains(body, []byte(`"tool_result"`)) && bytes.Contains(body, []byte(tag)):
				return textAnswer("started " + tag)
			case bytes.Contains(body, []byte(`"Bash"`)) && bytes.Contains(body, []byte(tag)) && !called[task]:
				called[task] = true
				return bashToolCall("sh -c 'sleep 300; true' " + tag + "-job >/dev/null 2>&1 &")
			}
		}
		return ""
	})
	home, work := t.TempDir(), t.TempDir()
	env, _ := realclients.ClaudeSetup(home, work, model.Addr, mark)
	claude := filepath.Join(mods, "claude-code-2.1.331", "claude")
	t.Cleanup(func() { realclients.KillOurs(mark) })
	pol := clitest.ExamplePolicy(t, mark)
	ours := func(tag string) []int {
		var out []int
		for _, pid := range realclients.MarkedPIDs(mark) {
			if strings.Contains(clitest.CmdlineOf(pid), tag) || strings.Contains(environOf(pid), tag) {
				out = append(out, pid)
			}
		}
		return out
	}
	task := func(name string, wrapped bool) (int, string) {
		t.Helper()
		argv := []string{claude, "-p", "start the job " + mark + "-" + name, "--permission-mode", "default", "--allowedTools", "Bash"}
		if wrapped {
			argv = append([]string{clitest.Bin, "run", "--policy", pol, "--"}, argv...)
		}
		pid, log := realclients.StartDetached(t, work, append(env, "SANDBOX_TASK="+mark+"-"+name), argv...)
		var ws syscall.WaitStatus
		done := make(chan struct{})
		go func() { syscall.Wait4(pid, &ws, 0, nil); close(done) }()
		select {
		case <-done:
		case <-time.After(120 * time.Second):
			b, _ := os.ReadFile(log)
			t.Fatalf("%s did not end within 120 s; requests %q\n%s", name, model.Requests(), clitest.Tail(b, 2000))
		}
		b, _ := os.ReadFile(log)
		return ws.ExitStatus(), string(b)
	}

	// Task 0, claude alone: its job outlives it (the control).
	if code, out := task("task0", false); code != 0 {
		t.Fatalf("task 0: exit %d\n%s", code, clitest.Tail([]byte(out), 2000))
	}
	var left0 []int
	clitest.WaitFor(t, func() bool { left0 = ours(mark + "-task0"); return len(left0) > 0 }, "task 0's leftovers")
	t.Logf("task 0 (claude alone) left %d processes: %v", len(left0), left0)

	for _, name := range []string{"task1", "task2"} {
		code, out := task(name, true)
		if code != 0 {
			t.Fatalf("%s under reaper run: exit %d\n%s", name, code, clitest.Tail([]byte(out), 3000))
		}
		if left := ours(mark + "-" + name); len(left) > 0 {
			t.Errorf("%s under reaper run left %v alive:\n%s", name, left, clitest.Tail([]byte(out), 3000))
		}
		if !strings.Contains(out, "reaper run: tree") {
			t.Errorf("%s: run reaped nothing it says:\n%s", name, clitest.Tail([]byte(out), 3000))
		}
		t.Logf("%s under reaper run: its leftovers reaped as it ended:\n%s", name, clitest.GrepLines(out, "reaper run:"))
	}
	for _, pid := range left0 {
		if !clitest.Alive(pid) {
			t.Errorf("task 0's process %d, never run's, was ended", pid)
		}
	}
}

// environOf is pid's environment, NULs as newlines ("" when unreadable).
func environOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	return strings.ReplaceAll(string(b), "\x00", "\n")
}

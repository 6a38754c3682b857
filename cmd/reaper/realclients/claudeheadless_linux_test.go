package realclients

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealClaudeHeadlessNoReader: Claude Code 2.1.331 run headless by a
// script — `claude -p PROMPT | reader &`, the script gone, claude
// reparented to this test — waits on the model (the stand-in holds every
// turn). While the reader lives, claude is its live session's and no
// finding (the control). Once the reader is gone, the kernel says no
// process can read claude's output any more: the finding is abandoned,
// and the example policy reports it (agent-client-abandoned) and signals
// nothing.
func TestRealClaudeHeadlessNoReader(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "chmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env, _ := realclients.ClaudeSetup(home, work, model.Addr, mark)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	// A job of its own (set -m: its group, which the cleanup kills), its
	// stdout the pipe's write end, the shell gone.
	log := filepath.Join(t.TempDir(), "claude.log")
	sh := exec.Command("bash", "-c", `set -m; "$@" </dev/null >&3 2>"$LOG" 3>&- & echo $!`, "bash",
		filepath.Join(mods, "claude-code-2.1.331", "claude"), "-p", "say hello "+mark)
	sh.Dir, sh.Env, sh.ExtraFiles = work, append(env, "LOG="+log), []*os.File{w}
	var out bytes.Buffer
	sh.Stdout = &out
	if err := sh.Run(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var claude int
	fmt.Sscan(out.String(), &claude)
	if claude <= 0 {
		t.Fatalf("no pid: %q", out.String())
	}
	t.Cleanup(func() { syscall.Kill(-claude, syscall.SIGKILL) })
	for deadline := time.Now().Add(90 * time.Second); model.Turns() == 0 || len(realclients.MarkedPIDs(mark)) < 3; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("claude -p did not reach the model with its servers up within 90 s (turns %d, marked %v):\n%s", model.Turns(), realclients.MarkedPIDs(mark), b)
		}
	}
	if clitest.ParentOf(claude) != os.Getpid() {
		t.Fatalf("claude %d is not reparented to this test: parent %d", claude, clitest.ParentOf(claude))
	}
	pol := clitest.ExamplePolicy(t, mark)
	rep, res := clitest.ReapJSONEnv(t, nil, "--policy", pol)
	if f := rep.Finding(claude); f != nil && clitest.Contains(f.Reasons, "abandoned") {
		t.Errorf("control: with its reader alive, claude %d is abandoned: %+v", claude, f)
	}
	t.Logf("reader alive: claude %d is %v\n%s", claude, rep.Finding(claude), res.Stderr)

	r.Close()
	rep, res = clitest.ReapJSONEnv(t, nil, "--policy", pol)
	f := rep.Finding(claude)
	switch {
	case f == nil:
		t.Fatalf("no finding for claude %d once its reader is gone\n%s\n%s", claude, res.Stdout, res.Stderr)
	case !clitest.Contains(f.Reasons, "abandoned") || f.Rule != "agent-client-abandoned" || f.Outcome != "reported":
		t.Errorf("claude %d: %s by %q, reasons %v, evidence %q; want abandoned, reported by agent-client-abandoned", claude, f.Outcome, f.Rule, f.Reasons, f.Evidence)
	default:
		t.Logf("claude %d: %s by %s, reasons %v, evidence %q", claude, f.Outcome, f.Rule, f.Reasons, f.Evidence)
	}
	if !clitest.Alive(claude) {
		t.Errorf("claude %d was ended: the example policy only reports it", claude)
	}
}

package realclients

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealClaudeVersionTitled: the native Claude Code 2.1.331 as its
// installer lays it out, ~/.local/share/claude/versions/2.1.331, titles
// itself with its version (comm "2.1.331", as users saw thirty of them,
// anthropics/claude-code #17219). Run so, with its config in a dir only
// its environment names (CLAUDE_CONFIG_DIR), it is still Claude Code to
// reaper: ps shows its session, from the session file that dir holds.
// The control: the same binary titled with its version but run from
// another dir is not taken for Claude Code, and its dir is not read.
func TestRealClaudeVersionTitled(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "cvmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	release := make(chan struct{})
	model.Answer(func(body []byte) string {
		if bytes.Contains(body, []byte(mark)) {
			<-release // the turn held: the sessions live while ps looks
		}
		return textAnswer("done " + mark)
	})
	t.Cleanup(func() { close(release) })
	t.Cleanup(func() { realclients.KillOurs(mark) })
	native := filepath.Join(mods, "claude-code-2.1.331", "claude")
	start := func(dir string) (int, string) {
		home, work := t.TempDir(), t.TempDir()
		env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
		bin := filepath.Join(home, dir, "2.1.331")
		os.MkdirAll(filepath.Dir(bin), 0o755)
		if err := os.Symlink(native, bin); err != nil {
			t.Fatal(err)
		}
		pid, _ := realclients.StartDetached(t, work, env, bin, "-p", "hold on "+mark)
		return pid, cfgDir
	}
	installed, installedCfg := start(".local/share/claude/versions")
	elsewhere, _ := start("opt/tools")
	for _, pid := range []int{installed, elsewhere} {
		clitest.WaitFor(t, func() bool { return clitest.CommOf(pid) == "2.1.331" }, "claude titled with its version")
	}
	clitest.WaitFor(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(installedCfg, "sessions", "*.json"))
		return len(files) > 0
	}, "the installed claude's session file")
	sessions := map[int]string{}
	deadline := time.Now().Add(30 * time.Second)
	for sessions[installed] == "" && time.Now().Before(deadline) {
		r := clitest.RunReaper(t, nil, "ps", "-o", "json")
		var doc struct {
			Sessions []struct {
				PID       int    `json:"pid"`
				Client    string `json:"client"`
				SessionID string `json:"session_id"`
			} `json:"sessions"`
		}
		json.Unmarshal([]byte(r.Stdout), &doc)
		sessions = map[int]string{}
		for _, s := range doc.Sessions {
			sessions[s.PID] = s.Client + " " + s.SessionID
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := sessions[installed]; !strings.HasPrefix(got, "claude-code ") || strings.TrimPrefix(got, "claude-code ") == "" {
		t.Errorf("the installed, version-titled claude %d: session %q, want claude-code with its session id", installed, got)
	}
	if got, ok := sessions[elsewhere]; ok {
		t.Errorf("control: the version-titled binary run from elsewhere, %d, is a session %q", elsewhere, got)
	}
	t.Logf("claude %d titled 2.1.331 from ~/.local/share/claude/versions: %q; the same from elsewhere, %d: not a session", installed, sessions[installed], elsewhere)
}

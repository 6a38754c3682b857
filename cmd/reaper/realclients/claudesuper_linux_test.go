package realclients

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealClaudeSuperseded: Claude Code 2.1.331 in its interactive UI on a
// terminal, with two stdio servers in the project's .mcp.json. One entry
// is edited and reconnected (/mcp, Reconnect): claude starts the new copy
// and never stops the old one, which runs on under it (the control). The
// other, unchanged, is reconnected too: claude stops its old copy itself.
// The reap with the example policy finds the old edited copy superseded,
// by claude's own MCP log and the table, and ends it (SIGINT, as claude
// would); claude, the current copies and nothing else are touched.
//
// Twice: the servers configured as `node SCRIPT`, and as the script itself
// (`#!/usr/bin/env node`), which the kernel runs as node with the
// script's path — matched to its config entry all the same.
func TestRealClaudeSuperseded(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, form := range []string{"node-script", "script"} {
		t.Run(form, func(t *testing.T) { claudeSuperseded(t, mods, form == "script") })
	}
}

func claudeSuperseded(t *testing.T, mods string, asScript bool) {
	mark := "csmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + map[bool]string{true: "s", false: "n"}[asScript]
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	env, cfgDir := realclients.ClaudeSetup(home, work, model.Addr, mark)
	// The project's servers only, all of them enabled.
	cfgFile := filepath.Join(cfgDir, ".claude.json")
	var cfg map[string]any
	b, _ := os.ReadFile(cfgFile)
	json.Unmarshal(b, &cfg)
	cfg["projects"] = map[string]any{work: map[string]any{"hasTrustDialogAccepted": true, "enableAllProjectMcpServers": true, "mcpServers": map[string]any{}}}
	b, _ = json.Marshal(cfg)
	os.WriteFile(cfgFile, b, 0o600)
	script := filepath.Join(clitest.Root(), "testdata", "clients", "stubborn-mcp.mjs")

	entry := func(args ...string) map[string]any {
		return map[string]any{"command": "node", "args": append([]string{script}, args...)}
	}
	if asScript {
		// The server as its own command: an executable script whose
		// #! line runs node.
		code, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(t.TempDir(), "stubborn-mcp")
		if err := os.WriteFile(exe, append([]byte("#!/usr/bin/env node\n"), code...), 0o755); err != nil {
			t.Fatal(err)
		}
		entry = func(args ...string) map[string]any { return map[string]any{"command": exe, "args": args} }
	}
	writeMCP := func(version string) {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"edited": entry("--mcp-edited", mark, version, "--with-tool"),
			"same":   entry("--mcp-same", mark),
		}})
		if err := os.WriteFile(filepath.Join(work, ".mcp.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeMCP("v1")
	term := clitest.StartOnTerminal(t, work, clitest.OnTerminal(env), filepath.Join(mods, "claude-code-2.1.331", "claude"), "--permission-mode", "default")
	t.Cleanup(func() { realclients.KillOurs(mark) })
	server := func(arg string) []int {
		var out []int
		for _, pid := range realclients.MarkedPIDs(mark) {
			if strings.Contains(clitest.CmdlineOf(pid), arg) {
				out = append(out, pid)
			}
		}
		return out
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(clientDeadline()); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within the deadline; marked %v; the screen:\n%s", what, realclients.MarkedPIDs(mark), term.Screen(3000))
			}
		}
	}
	waitFor("claude starts both servers", func() bool { return len(server("--mcp-edited")) == 1 && len(server("--mcp-same")) == 1 })
	old, same := server("--mcp-edited")[0], server("--mcp-same")[0]
	claude := clitest.ParentOf(old)
	keys := func(ks ...string) {
		for _, k := range ks {
			fmt.Fprint(term.Master, k)
			time.Sleep(1500 * time.Millisecond)
		}
	}
	// choose moves a menu's cursor (❯) down to the item that says label
	// and takes it: what the menu holds is read off the screen, not
	// assumed ("edited" has a tool, so "View tools" comes before
	// "Reconnect" in its menu).
	choose := func(label string) {
		t.Helper()
		for moves := range 12 {
			if item := selected(term.Output()); strings.Contains(item, label) {
				t.Logf("menu: %q after %d moves down", item, moves)
				keys("\r")
				return
			}
			keys("\x1b[B")
		}
		t.Fatalf("no menu item %q under the cursor; the screen:\n%s", label, strings.Join(playScreen(term.Output()), "\n"))
	}
	// Edit "edited", reconnect it: /mcp, the server, Reconnect.
	writeMCP("v2")
	keys("/mcp", "\r")
	choose("edited")
	choose("Reconnect")
	waitFor("the edited entry's new copy", func() bool { return len(server(mark+" v2")) == 1 })
	current := server(mark + " v2")[0]
	keys("\x1b")
	// Reconnect "same", unchanged: claude stops its old copy itself.
	keys("/mcp", "\r")
	choose("same")
	choose("Reconnect")
	waitFor("the unchanged entry reconnected", func() bool {
		s := server("--mcp-same")
		return len(s) == 1 && s[0] != same
	})
	sameNow := server("--mcp-same")[0]
	keys("\x1b")
	time.Sleep(3 * time.Second) // past the hold
	logs, _ := filepath.Glob(filepath.Join(home, ".cache", "claude-cli-nodejs", "*", "mcp-logs-*", "*.jsonl"))
	t.Logf("claude %d: the edited entry's old copy %d (%s) and new %d; the unchanged one's %d, now %d; logs %v", claude, old, clitest.StateOf(old), current, same, sameNow, logs)
	if st := clitest.StateOf(old); st == "" || st == "Z" || clitest.ParentOf(old) != claude {
		t.Fatalf("control: the old copy %d did not outlive its reconnect under claude (state %q, parent %d)", old, st, clitest.ParentOf(old))
	}
	if st := clitest.StateOf(same); st != "" && st != "Z" {
		t.Errorf("the unchanged entry's old copy %d lives: claude did not stop it", same)
	}

	// reaper ps shows the session as it is: claude with both current
	// copies, and the old edited copy under it marked as the leak.
	pol := clitest.ExamplePolicy(t, mark)
	if client, ok, out := clitest.PSSession(t, pol, claude, map[int]string{old: "superseded", current: "", sameNow: ""}); client != "claude-code" || !ok {
		t.Errorf("reaper ps: claude %d as %q, its servers marked %v; want the old copy %d a superseded leak, %d and %d not:\n%s", claude, client, ok, old, current, sameNow, out)
	}
	t.Logf("reaper ps:\n%s", clitest.RunReaper(t, nil, "ps", "--policy", pol, "--color", "never").Stdout)
	audit := filepath.Join(t.TempDir(), "audit.log")
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", pol, "--audit-log", audit)
	f := rep.Finding(old)
	switch {
	case f == nil:
		t.Errorf("no finding for the superseded copy %d\n%s\n%s", old, r.Stdout, r.Stderr)
	case f.Rule != "claude-superseded" || f.Outcome != "killed" || !clitest.Contains(f.Reasons, "superseded"):
		t.Errorf("the superseded copy %d: %s by %q, reasons %v, evidence %q; want killed by claude-superseded", old, f.Outcome, f.Rule, f.Reasons, f.Evidence)
	default:
		t.Logf("the superseded copy %d: %s by %s, reasons %v, evidence %q", old, f.Outcome, f.Rule, f.Reasons, f.Evidence)
	}
	for _, g := range rep.Findings {
		if g.RootPID != old && slicesHas(realclients.MarkedPIDs(mark), g.RootPID) {
			t.Errorf("a finding outside the leftover: %+v", g)
		}
	}
	var signals []string
	lines, _ := os.ReadFile(audit)
	for _, line := range strings.Split(string(lines), "\n") {
		var ev struct {
			PID    int    `json:"pid"`
			Signal string `json:"signal"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Signal != "" {
			signals = append(signals, fmt.Sprintf("%s to %d", ev.Signal, ev.PID))
		}
	}
	t.Logf("signals sent: %v", signals)
	if !clitest.HasString(signals, fmt.Sprintf("SIGINT to %d", old)) {
		t.Errorf("no SIGINT to the superseded copy %d: %v", old, signals)
	}
	for _, sig := range signals {
		if !strings.HasSuffix(sig, fmt.Sprintf(" to %d", old)) {
			t.Errorf("a signal to another process: %s", sig)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if st := clitest.StateOf(old); st != "" && st != "Z" {
		t.Errorf("the superseded copy %d is alive after the reap", old)
	}
	for _, pid := range []int{claude, current, sameNow} {
		if st := clitest.StateOf(pid); st == "" || st == "Z" {
			t.Errorf("%d (%s) is gone after the reap: only the superseded copy may be", pid, clitest.CmdlineOf(pid))
		}
	}
}

// selected is the menu item under the cursor (❯) on the screen the
// client drew — the whole output played on a grid, as a terminal does
// (Ink redraws only the cells that change, so the bytes after the last ❯
// are not the item) — the lowest such row's text after the ❯.
func selected(out []byte) string {
	rows := playScreen(out)
	for r := len(rows) - 1; r >= 0; r-- {
		if _, item, ok := strings.Cut(rows[r], "❯"); ok {
			return strings.TrimSpace(item)
		}
	}
	return ""
}

// playScreen plays a terminal's output onto a grid of cells: text,
// carriage return, newline, backspace and the cursor's CSI moves (A B C D
// E F G H f), erases (J K); every other control sequence is skipped. The
// rows, each trimmed. Enough for a test to read what a menu shows.
func playScreen(out []byte) []string {
	var grid [][]rune
	row, col, savedRow, savedCol := 0, 0, 0, 0
	put := func(r rune) {
		for len(grid) <= row {
			grid = append(grid, nil)
		}
		for len(grid[row]) <= col {
			grid[row] = append(grid[row], ' ')
		}
		grid[row][col] = r
		col++
	}
	s := []rune(string(out))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\r':
			col = 0
		case c == '\n':
			row++
		case c == '\b':
			col = max(col-1, 0)
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?' || s[j] == '>' || s[j] == '<' || s[j] == '=') {
				j++
			}
			if j >= len(s) {
				i = j
				continue
			}
			params := strings.Split(strings.TrimLeft(string(s[i+2:j]), "?><="), ";")
			n := func(k, def int) int {
				if k < len(params) {
					if v, err := strconv.Atoi(params[k]); err == nil && v > 0 {
						return v
					}
				}
				return def
			}
			switch s[j] {
			case 'A':
				row = max(row-n(0, 1), 0)
			case 'B':
				row += n(0, 1)
			case 'C':
				col += n(0, 1)
			case 'D':
				col = max(col-n(0, 1), 0)
			case 'E':
				row, col = row+n(0, 1), 0
			case 'F':
				row, col = max(row-n(0, 1), 0), 0
			case 'G':
				col = n(0, 1) - 1
			case 'H', 'f':
				row, col = n(0, 1)-1, n(1, 1)-1
			case 'K':
				if row < len(grid) && col < len(grid[row]) {
					grid[row] = grid[row][:col]
				}
			case 'J':
				if n(0, 0) == 2 {
					grid = nil
				} else if row < len(grid) {
					if col < len(grid[row]) {
						grid[row] = grid[row][:col]
					}
					grid = grid[:row+1]
				}
			}
			i = j
		case c == 0x1b && i+1 < len(s) && s[i+1] == ']':
			// OSC: to BEL or ST.
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		case c == 0x1b && i+1 < len(s) && s[i+1] == '7':
			savedRow, savedCol = row, col
			i++
		case c == 0x1b && i+1 < len(s) && s[i+1] == '8':
			row, col = savedRow, savedCol
			i++
		case c == 0x1b:
			i++ // a two-byte sequence
		case c < 0x20 || c == 0x7f:
		default:
			put(c)
		}
	}
	rows := make([]string, len(grid))
	for r := range grid {
		rows[r] = strings.TrimRight(string(grid[r]), " ")
	}
	return rows
}

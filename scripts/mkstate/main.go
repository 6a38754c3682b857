// Command mkstate writes OpenClaw state for many users, as a benchmark or
// an attack needs it: for each user a home under DIR with ~/.openclaw in
// the shape OpenClaw 2026.9.6 leaves it (openclaw.json with stdio MCP
// servers, gateway-instance-id, a gateway lock naming a dead gateway in
// <state>/tmp/openclaw-<uid>/, state/openclaw.sqlite with ACP lease,
// codex registry and thread rows and exec task rows, and an agent's
// session store), owned by uid BASE+k. With -hostile each user's home
// holds instead the 20 state dirs one home may have, each with stores
// that cost seconds or gigabytes to read (docs/threat-model.md, attacks 5
// and 6). With -clients (the default) each real-shaped home also holds the
// other agent clients' state: Claude Code's ~/.claude (session files of
// dead sessions, ~/.claude.json with servers in its projects), Codex's
// ~/.codex (a daemon pid file, config.toml), Gemini CLI's ~/.gemini and
// OpenCode's ~/.config/opencode. It prints the passwd(5) lines of the
// users, for a mount namespace's /etc/passwd.
//
// usage: mkstate -dir DIR [-users N] [-uid BASE] [-rows N] [-hostile] [-clients=false]
package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	dir := flag.String("dir", "", "where the homes go")
	users := flag.Int("users", 20, "how many users")
	base := flag.Int("uid", 61000, "the first user's uid")
	rows := flag.Int("rows", 200, "exec task rows per user")
	hostile := flag.Bool("hostile", false, "hostile stores instead of real-shaped state")
	clients := flag.Bool("clients", true, "the other agent clients' state too (real-shaped homes)")
	flag.Parse()
	if *dir == "" {
		flag.Usage()
		os.Exit(2)
	}
	for k := 0; k < *users; k++ {
		uid := *base + k
		home := filepath.Join(*dir, fmt.Sprintf("u%d", uid))
		var err error
		if *hostile {
			err = hostileHome(home)
		} else {
			err = realHome(home, uid, *rows)
			if err == nil && *clients {
				err = clientsHome(home, uid)
			}
		}
		if err == nil {
			err = chownAll(home, uid)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mkstate:", err)
			os.Exit(1)
		}
		fmt.Printf("bench%d:x:%d:%d::%s:/bin/sh\n", uid, uid, uid, home)
	}
}

func chownAll(dir string, uid int) error {
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}

func store(path string, stmts ...string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("%s: %s: %w", path, s, err)
		}
	}
	return nil
}

func write(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, ok := v.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return err
		}
	}
	return os.WriteFile(path, b, 0o600)
}

// realHome is one user's ~/.openclaw as a gateway that ran for a while and
// crashed leaves it.
func realHome(home string, uid, rows int) error {
	st := filepath.Join(home, ".openclaw")
	now := time.Now()
	if err := write(filepath.Join(st, "openclaw.json"), []byte(`{
  // written by scripts/mkstate
  gateway: { mode: "local" },
  mcp: { servers: {
    fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] },
    docs: { command: "node", args: ["/opt/docs-mcp/index.js"] },
  } },
}`)); err != nil {
		return err
	}
	if err := write(filepath.Join(st, "gateway-instance-id"), []byte("instance-"+fmt.Sprint(uid))); err != nil {
		return err
	}
	lock := map[string]any{"pid": 3_999_999, "createdAt": now.Add(-time.Hour).UTC().Format(time.RFC3339Nano), "startTime": 12345,
		"configPath": filepath.Join(st, "openclaw.json")}
	if err := write(filepath.Join(st, "tmp", fmt.Sprintf("openclaw-%d", uid), "gateway.1a2b3c4d.lock"), lock); err != nil {
		return err
	}
	stmts := []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE plugin_state_entries (plugin_id TEXT NOT NULL, namespace TEXT NOT NULL, entry_key TEXT NOT NULL,
			value_json TEXT NOT NULL, created_at INTEGER, updated_at INTEGER, PRIMARY KEY (plugin_id, namespace, entry_key))`,
		`CREATE TABLE task_runs (task_id TEXT PRIMARY KEY, task_kind TEXT, source_id TEXT, requester_session_key TEXT,
			task TEXT, status TEXT, created_at INTEGER, updated_at INTEGER, result_json TEXT)`,
	}
	for i := 0; i < 3; i++ {
		v, _ := json.Marshal(map[string]any{"leaseId": fmt.Sprintf("lease-%d", i), "gatewayInstanceId": "instance", "sessionKey": "agent:main:main",
			"rootPid": 3_999_000 + i, "state": "closed", "startedAt": now.Add(-30 * time.Minute).UnixMilli()})
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO plugin_state_entries VALUES ('acpx', 'process-leases', 'lease-%d', '%s', 0, 0)`, i, v))
	}
	reg, _ := json.Marshal(map[string]any{"parent": map[string]any{"pid": 3_999_999, "pgid": 3_999_999, "startedAt": "boot:1"},
		"child": map[string]any{"pid": 3_999_998, "pgid": 3_999_998, "startedAt": "boot:2"}})
	stmts = append(stmts, fmt.Sprintf(`INSERT INTO plugin_state_entries VALUES ('codex', 'app-server-processes', 'app', '%s', 0, 0)`, reg))
	for i := 0; i < 4; i++ {
		th := fmt.Sprintf(`{"binding": {"threadId": "019a%04x-0000-7000-8000-000000000000"}}`, i)
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO plugin_state_entries VALUES ('codex', 'app-server-thread-bindings', 't%d', '%s', 0, 0)`, i, th))
	}
	for i := 0; i < rows; i++ {
		status := "succeeded"
		if i%10 == 0 {
			status = "running"
		}
		// A row a minute, the newest an hour ago: before the burst of
		// processes a benchmark starts, which would otherwise fall into a
		// row's 6-second window by the thousand (a real host starts a
		// few processes in 6 seconds, not 20,000).
		at := now.Add(-time.Hour - time.Duration(rows-i)*time.Minute)
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO task_runs VALUES ('task-%d', 'exec', 'slug-%d', 'agent:main:s%d', 'npm test -- --grep case-%d', '%s', %d, 0, '{}')`,
			i, i, i%20, i, status, at.UnixMilli()))
	}
	if err := store(filepath.Join(st, "state", "openclaw.sqlite"), stmts...); err != nil {
		return err
	}
	sess := []string{
		`PRAGMA journal_mode=WAL`,
		`CREATE TABLE session_nodes (session_key TEXT PRIMARY KEY, session_id TEXT, archived_at INTEGER)`,
		`CREATE TABLE session_transcript_archives (session_key TEXT, reason TEXT, created_at INTEGER)`,
	}
	for i := 0; i < 20; i++ {
		sess = append(sess, fmt.Sprintf(`INSERT INTO session_nodes VALUES ('agent:main:s%d', 'id-%d', NULL)`, i, i))
	}
	for i := 20; i < 30; i++ {
		sess = append(sess, fmt.Sprintf(`INSERT INTO session_transcript_archives VALUES ('agent:main:s%d', 'deleted', %d)`, i, now.UnixMilli()))
	}
	return store(filepath.Join(st, "agents", "main", "agent", "openclaw-agent.sqlite"), sess...)
}

// hostileHome is the 20 state dirs one home may have, as docs/threat-model.md
// attacks 5 and 6 made them: each with a valid, empty task store and an
// agent store whose session_nodes is a view — in three of them computing
// five 200 MB values (attack 6), in the others over an endless recursive
// CTE that never yields a row, so no LIMIT ends it (attack 5).
func hostileHome(home string) error {
	names := []string{".openclaw", ".clawdbot", ".moldbot", ".moltbot"}
	for i := 0; i < 16; i++ {
		names = append(names, fmt.Sprintf(".openclaw-p%02d", i))
	}
	for i, n := range names {
		dir := filepath.Join(home, n)
		if err := store(filepath.Join(dir, "state", "openclaw.sqlite"),
			`CREATE TABLE plugin_state_entries (plugin_id TEXT, namespace TEXT, entry_key TEXT, value_json TEXT)`,
			`CREATE TABLE task_runs (task_id TEXT, task_kind TEXT, source_id TEXT, requester_session_key TEXT, task TEXT, status TEXT, created_at INTEGER)`); err != nil {
			return err
		}
		view := `CREATE VIEW session_nodes AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c)
			SELECT 'k' || i AS session_key, NULL AS archived_at FROM c WHERE i < 0`
		if i < 3 {
			view = `CREATE VIEW session_nodes AS SELECT printf('%.*c', 200000000, 'x') AS session_key, NULL AS archived_at
				FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5)`
		}
		if err := store(filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), view); err != nil {
			return err
		}
	}
	return nil
}

// clientsHome is the other agent clients' state in one home, as each
// leaves it after a while of use: Claude Code's session files (three dead
// sessions) and its config with servers globally and in ten projects,
// Codex's daemon pid file and config.toml, Gemini CLI's settings and
// OpenCode's config, each declaring stdio MCP servers.
func clientsHome(home string, uid int) error {
	now := time.Now()
	for i := 0; i < 3; i++ {
		pid := 3_998_000 + i
		s := map[string]any{"pid": pid, "sessionId": fmt.Sprintf("%08x-0000-4000-8000-%012d", uid, i), "cwd": "/srv/project",
			"startedAt": now.Add(-time.Hour).UnixMilli(), "procStart": "123456", "version": "2.1.197", "kind": "interactive", "entrypoint": "cli"}
		if err := write(filepath.Join(home, ".claude", "sessions", fmt.Sprintf("%d.json", pid)), s); err != nil {
			return err
		}
	}
	projects := map[string]any{}
	for i := 0; i < 10; i++ {
		projects[fmt.Sprintf("/srv/project-%d", i)] = map[string]any{"hasTrustDialogAccepted": true,
			"mcpServers": map[string]any{"docs": map[string]any{"command": "node", "args": []string{fmt.Sprintf("/opt/docs-%d/index.js", i)}}}}
	}
	cfg := map[string]any{"hasCompletedOnboarding": true, "projects": projects,
		"mcpServers": map[string]any{"fs": map[string]any{"type": "stdio", "command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv"}}}}
	if err := write(filepath.Join(home, ".claude.json"), cfg); err != nil {
		return err
	}
	rec := `{"pid":3997000,"processStartTime":"Mon Nov 23 10:00:00 2026","processIdentity":{"Linux":{"bootId":"old","startTicks":99}}}`
	if err := write(filepath.Join(home, ".codex", "app-server-daemon", "daemon.pid"), []byte(rec)); err != nil {
		return err
	}
	if err := write(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"mock\"\n[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv\"]\n")); err != nil {
		return err
	}
	if err := write(filepath.Join(home, ".gemini", "settings.json"), []byte("{\n  // mkstate\n  \"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv\"]}}\n}\n")); err != nil {
		return err
	}
	return write(filepath.Join(home, ".config", "opencode", "opencode.json"), []byte(`{"mcp": {"fs": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"]}}}`))
}

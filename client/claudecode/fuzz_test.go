package claudecode

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Claude Code's session files, its
// .claude.json, a session's transcript and its MCP log, its daemon's lock,
// roster and log, the adapter's Read, Decode and Judge neither panic nor
// hang, print one line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".claude", Files: map[string]string{
		".claude/sessions/4242.json": `{"pid": 4242, "sessionId": "s-1", "cwd": "/w", "startedAt": 1795672800000, "procStart": "720000"}`,
		".claude/projects/-w/s-1.jsonl": `{"timestamp":"2026-11-26T10:00:00Z","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"yes &"}}]}}` + "\n" +
			`{"timestamp":"2026-11-26T10:00:01Z","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}` + "\n",
		".cache/claude-cli-nodejs/-w/mcp-logs-srv/2026-11-26T10-00-00-000Z.jsonl": `{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-11-26T10:00:00Z","sessionId":"s-1"}` + "\n" +
			`{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-11-26T10:00:09Z","sessionId":"s-1"}` + "\n",
		".claude/daemon.lock":        `{"pid": 4300, "procStart": "730000", "version": "2.1.331"}`,
		".claude/daemon/roster.json": `{"proto": 1, "supervisorPid": 4300, "workers": {"ab12cd34": {"pid": 4310, "procStart": "731000", "replPid": 4320, "replProcStart": "732000", "sessionId": "s-2", "cwd": "/w", "ptySock": "/tmp/cc-daemon-0/f3e76c85/spare/a.pty.sock"}}}`,
		".claude/daemon.log": "[2026-11-26T10:00:00.000Z] [supervisor] ─── daemon start ─── version=2.1.331 pid=4300 origin=transient\n" +
			"[2026-11-26T10:00:00.100Z] [bg] bg: control socket bound at /tmp/cc-daemon-0/f3e76c85/control.sock\n" +
			"[2026-11-26T10:00:01.000Z] [bg] bg spare spawned host pid=4310\n[2026-11-26T10:00:01.100Z] [bg] bg claimed-spare ab12cd34 (shell)\n" +
			"[2026-11-26T10:00:09.000Z] [bg] bg settled ab12cd34 (done)\n",
		".claude.json": "{\"mcpServers\": {\"srv\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"]}}, \"projects\": {\"/w\": {\"mcpServers\": {}}}}",
	}})
}

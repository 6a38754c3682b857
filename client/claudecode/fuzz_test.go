package claudecode

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Claude Code's session files, its
// .claude.json, a session's transcript and its MCP log, the adapter's Read, Decode and Judge neither panic nor
// hang, print one line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".claude", Files: map[string]string{
		".claude/sessions/4242.json": `{"pid": 4242, "sessionId": "s-1", "cwd": "/w", "startedAt": 1795672800000, "procStart": "720000"}`,
		".claude/projects/-w/s-1.jsonl": `{"timestamp":"2026-11-26T10:00:00Z","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"yes &"}}]}}` + "\n" +
			`{"timestamp":"2026-11-26T10:00:01Z","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}` + "\n",
		".cache/claude-cli-nodejs/-w/mcp-logs-srv/2026-11-26T10-00-00-000Z.jsonl": `{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-11-26T10:00:00Z","sessionId":"s-1"}` + "\n" +
			`{"debug":"Starting connection with timeout of 30000ms","timestamp":"2026-11-26T10:00:09Z","sessionId":"s-1"}` + "\n",
		".claude.json": "{\"mcpServers\": {\"srv\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"]}}, \"projects\": {\"/w\": {\"mcpServers\": {}}}}",
	}})
}

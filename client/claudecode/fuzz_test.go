package claudecode

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Claude Code's session files and its
// .claude.json, the adapter's Read, Decode and Judge neither panic nor
// hang, print one line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".claude", Files: map[string]string{
		".claude/sessions/4242.json": `{"pid": 4242, "sessionId": "s-1", "startedAt": 1795672800000, "procStart": "720000"}`,
		".claude.json":               "{\"mcpServers\": {\"srv\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"]}}, \"projects\": {\"/w\": {\"mcpServers\": {}}}}",
	}})
}

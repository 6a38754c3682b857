package copilot

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Copilot CLI's mcp-config.json or a
// session's lock, the adapter's Read, Decode
// and Judge neither panic nor hang, print one line of JSON, and make every
// claim the reader's uid's (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".copilot", Files: map[string]string{
		".copilot/mcp-config.json": `{"mcpServers": {"srv": {"type": "local", "command": "npx"}}}`,
		".copilot/session-state/b8c4d4ba-2cb0-4c84-9115-1160c0f4d985/inuse.11605.lock": "11605\n",
	}})
}

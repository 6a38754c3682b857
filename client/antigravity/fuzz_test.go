package antigravity

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in ~/.gemini/antigravity/mcp_config.json,
// the adapter's Read, Decode and Judge neither panic nor hang, print one
// line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".gemini/antigravity", Files: map[string]string{
		".gemini/antigravity/mcp_config.json": `{"mcpServers": {"srv": {"command": "npx", "args": ["-y", "srv"]}}}`,
	}})
}

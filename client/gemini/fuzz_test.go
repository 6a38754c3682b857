package gemini

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Gemini CLI's settings.json (JSON5),
// the adapter's Read, Decode and Judge neither panic nor hang, print one
// line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".gemini", Files: map[string]string{
		".gemini/settings.json": `{"mcpServers": {"srv": {"command": "npx"}}}`,
	}})
}

package qwen

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Qwen Code's settings.json, the adapter's Read, Decode
// and Judge neither panic nor hang, print one line of JSON, and make every
// claim the reader's uid's (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".qwen", Files: map[string]string{
		".qwen/settings.json": `{"mcpServers": {"srv": {"command": "npx"}}}`,
	}})
}

package opencode

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in OpenCode's configs (JSONC), the
// adapter's Read, Decode and Judge neither panic nor hang, print one line
// of JSON, and make every claim the reader's uid's (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".config/opencode", Files: map[string]string{
		".config/opencode/opencode.json":  `{"mcp": {"srv": {"type": "local", "command": ["npx"]}}}`,
		".config/opencode/opencode.jsonc": "// comments\n{\"mcp\": {}}",
	}})
}

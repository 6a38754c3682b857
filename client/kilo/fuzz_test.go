package kilo

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Kilo's kilo.json (OpenCode's format), the adapter's Read, Decode
// and Judge neither panic nor hang, print one line of JSON, and make every
// claim the reader's uid's (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".config/kilo", Files: map[string]string{
		".config/kilo/kilo.json": `{"mcp": {"srv": {"type": "local", "command": ["npx"]}}}`,
	}})
}

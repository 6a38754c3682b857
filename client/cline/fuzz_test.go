package cline

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Cline's hub lock and MCP settings,
// the adapter's Read, Decode and Judge neither panic nor hang, print one
// line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".cline", Files: map[string]string{
		".cline/data/locks/hub/production.json":        `{"hubId": "hub_1", "pid": 900, "startedAt": "2026-11-26T10:00:00Z", "port": 25463}`,
		".cline/data/settings/cline_mcp_settings.json": `{"mcpServers": {"srv": {"transport": {"type": "stdio", "command": "npx", "args": ["-y", "srv"]}}}}`,
	}})
}

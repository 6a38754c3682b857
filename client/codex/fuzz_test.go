package codex

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in Codex's daemon pid file and its
// config.toml, the adapter's Read, Decode and Judge neither panic nor
// hang, print one line of JSON, and make every claim the reader's uid's
// (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".codex", Files: map[string]string{
		".codex/app-server-daemon/daemon.pid": `{"pid": 4242, "processStartTime": "720000"}`,
		".codex/config.toml":                  "[mcp_servers.srv]\ncommand = \"npx\"\n",
	}})
}

package continuecli

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in ~/.continue/config.yaml, the
// adapter's Read, Decode and Judge neither panic nor hang, print one line
// of JSON, and make every claim the reader's uid's (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".continue", Files: map[string]string{
		".continue/config.yaml": "mcpServers:\n  - name: srv\n    command: npx\n    args: [\"-y\", \"srv\"]\n",
	}})
}

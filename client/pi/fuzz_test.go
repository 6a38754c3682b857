package pi

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// FuzzRead: whatever a user writes in ~/.pi/agent, the adapter's Read,
// Decode and Judge neither panic nor hang, print one line of JSON, and make
// every claim the reader's uid's (clienttest.FuzzRead).
func FuzzRead(f *testing.F) {
	clienttest.FuzzRead(f, Client, clienttest.Fixture{Dir: ".pi/agent", Files: map[string]string{
		".pi/agent/settings.json": `{"defaultProvider": "local"}`,
	}})
}

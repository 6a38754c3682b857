package doctor

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
)

// On Windows the watch check says both owners' exits and new sessions'
// files are watched, and by what, among the platform's checks.
func TestWindowsWatchAbility(t *testing.T) {
	var c *audit.Check
	for _, k := range platformChecks() {
		if k.Name == "watch" {
			c = &k
		}
	}
	if c == nil {
		t.Fatal("no watch check among Windows' checks")
	}
	details := strings.Join(c.Details, "\n")
	if c.Status != audit.CheckOK || !strings.Contains(details, "owners' exits: watched (a thread-pool wait on each process's handle)") ||
		!strings.Contains(details, "new sessions' files: watched (ReadDirectoryChangesW") {
		t.Errorf("watch check %+v: want ok, both watched, by what", *c)
	}
}

package gather

import (
	"context"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/platform"
)

// On Windows no reader child runs as another user, and reaper parses no
// other user's files in its own process: a dir of another uid is not read
// (its read is an error: a doubt for its processes), one of its own uid
// is. Both dirs hold the same readable lease file.
func TestWindowsOthersStateIsNotRead(t *testing.T) {
	me := platform.EUID()
	mine, theirs := userState(t, int(me)), userState(t, int(me))
	got := readAll(context.Background(), []Dir{
		{Path: mine, UID: me, Client: "openclaw"},
		{Path: theirs, UID: me + 1, Client: "openclaw"},
	}, testReaders(false))
	if got[0].err != nil || got[0].read == nil {
		t.Errorf("control, its own uid's: read %v, %v; want it read", got[0].read, got[0].err)
	}
	if got[1].err == nil || got[1].read != nil || !strings.Contains(got[1].err.Error(), "not read by uid") {
		t.Errorf("another uid's: read %v, %v; want it not read", got[1].read, got[1].err)
	}
}

package doctor

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform/watch"
)

// Where pidfds and inotify are to be had, the watch check says both are
// watched and shows the kernel's limit on inotify watches.
func TestWatchAbility(t *testing.T) {
	e, err := watch.New()
	if err != nil {
		t.Skipf("no pidfds here (%v): the check's warning is what this host gets", err)
	}
	e.Close()
	d, err := watch.NewDirs()
	if err != nil {
		t.Skipf("no inotify here (%v): the check's warning is what this host gets", err)
	}
	d.Close()
	c := watchAbility()
	details := strings.Join(c.Details, "\n")
	if c.Status != audit.CheckOK || !strings.Contains(details, "owners' exits: watched (pidfd and epoll)") ||
		!strings.Contains(details, "new sessions' files: watched (inotify; /proc/sys/fs/inotify/max_user_watches is ") {
		t.Errorf("watch check %+v: want ok, both watched, the limit shown", c)
	}
}

//go:build linux || windows

package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	pwatch "github.com/orphanreaper/reaper/platform/watch"
	"github.com/orphanreaper/reaper/run/gather"
)

// The changes that come while a pass is held join it at no cost to their
// user's budget: a client's one write of its session file is a create
// and a write or two, and charged each, they spent the budget the exit
// that followed needed — its leftovers then waited for the backstop. Five
// changes in a watched dir make one pass and one hint of the budget; the
// control: charged each, five are past the budget of three.
func TestChangesWhilePendingAreFree(t *testing.T) {
	d, err := pwatch.NewDirs()
	if err != nil {
		t.Skipf("no dir watch here: %v", err)
	}
	defer d.Close()
	uid := uint32(1001)
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		os.Chown(dir, int(uid), int(uid))
	} else if os.Geteuid() > 0 {
		uid = uint32(os.Geteuid())
	}
	if failed := d.Set([]pwatch.Dir{{Path: dir, UID: uid}}); failed != 0 {
		t.Fatalf("the dir is not watched (%d failed)", failed)
	}
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", i)), []byte("{}"), 0o644)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(d.C()) < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(d.C()); n < 5 {
		t.Fatalf("%d changes told of 5 files made", n)
	}
	w := &watcher{cfg: WatchConfig{Backstop: time.Hour, Gap: 200 * time.Millisecond}, dirs: d, state: gather.NewCache(), log: slog.New(slog.DiscardHandler)}
	timers := newTimers()
	timers.lastPass = time.Now()
	if trigger, stop := w.wait(context.Background(), timers, nil); stop || trigger != triggerHint {
		t.Fatalf("wait: %q (stop %v), want a hint's pass", trigger, stop)
	}
	if n := len(w.hints.byUID[uid]); n != 1 || w.metrics.HintsIgnored != 0 {
		t.Errorf("%d of the budget spent, %d ignored; want 1 and 0", n, w.metrics.HintsIgnored)
	}
	var charged hintBudget
	refused := 0
	for range 5 {
		if _, ok := charged.allow(uid, time.Now()); !ok {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("control: 5 charged, %d refused; want 2 past the budget of %d", refused, perUID)
	}
}

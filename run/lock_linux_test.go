package run

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A reaper that finds the lock held names the holder: its pid and command
// line, from /proc/locks. The control: once released, the lock is taken.
func TestLockNamesItsHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reaper.lock")
	release, err := lock(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lock(path, 0)
	var le lockError
	if !errors.As(err, &le) {
		t.Fatalf("second lock: %v, want a lockError", err)
	}
	if le.Holder != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())+" (") {
		t.Errorf("holder %d: %q; want this test's pid %d, with its command line", le.Holder, err, os.Getpid())
	}
	release()
	again, err := lock(path, 0)
	if err != nil {
		t.Fatalf("control: the released lock: %v", err)
	}
	again()
}

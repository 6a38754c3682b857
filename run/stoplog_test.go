package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/platform"
)

// TestReadOwn: a record beside the lock is read only when it is a regular
// file of the reaper's own user with no other name: not through a link,
// not a file that has another name (a hard link another user made in a
// directory they can write), not a FIFO. The control: the reaper's own
// file is read.
func TestReadOwn(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "reaper.stopped")
	if err := os.WriteFile(own, []byte(`{"stop":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := platform.ReadOwn(own, 1<<10); err != nil || string(b) != `{"stop":1}` {
		t.Fatalf("control, its own file: %q, %v", b, err)
	}
	link := filepath.Join(dir, "link.stopped")
	os.Symlink(own, link)
	hard := filepath.Join(dir, "hard.stopped")
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte(`{"stop":1}`), 0o600)
	os.Link(other, hard)
	for _, path := range []string{link, hard} {
		if b, err := platform.ReadOwn(path, 1<<10); err == nil {
			t.Errorf("%s: read %q", path, b)
		}
	}
	if _, err := platform.ReadOwn(own, 4); err == nil {
		t.Error("a file over the bound was read")
	}
}

package platform_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/platform"
)

// A file reaper holds open is in no client's way: the client deletes it
// (SQLite's WAL at its close) while the read goes on. The control, the
// same file held by os.Open (no FILE_SHARE_DELETE), refuses the delete.
func TestWindowsOpenLetsTheWriterGoOn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.sqlite-wal")
	write := func() {
		if err := os.WriteFile(path, []byte("wal"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write()
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err == nil {
		t.Fatal("control: a file os.Open holds was deleted")
	}
	held.Close()

	write()
	f, err := platform.OpenBeneath(dir, "store.sqlite-wal", platform.AnyOwner)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(path); err != nil {
		t.Errorf("a delete of the file reaper holds: %v", err)
	}
}

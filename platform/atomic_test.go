package platform

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.prom")
	for _, content := range []string{"first\n", "second\n"} {
		if err := WriteFileAtomic(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	// Windows keeps no Unix permission bits (a file is 0666, or 0444
	// read-only): the mode is Unix's to check.
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files in dir, want only the target", len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "dir"), nil, 0o644); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

//go:build unix

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every refusal of the bounded readers, each with the regular file that
// passes as its control.
func TestReadBeneath(t *testing.T) {
	dir := t.TempDir()
	me := os.Getuid()
	write := func(rel, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.json", `{"a":1}`)
	write("sub/ok.json", `{"a":2}`)
	write("big.json", strings.Repeat("x", 100))
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("root:$6$hash"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link.json"))
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "linkdir"))
	syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644)
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	tests := []struct {
		rel   string
		max   int64
		owner int
		want  error
	}{
		{"ok.json", 1 << 20, AnyOwner, nil},
		{"sub/ok.json", 1 << 20, me, nil},
		{"ok.json", 1 << 20, me + 1, ErrNotOwner},
		{"big.json", 99, AnyOwner, ErrTooLarge},
		{"big.json", 100, AnyOwner, nil},
		{"link.json", 1 << 20, AnyOwner, ErrSymlink},
		{"linkdir/secret", 1 << 20, AnyOwner, syscall.ENOTDIR},
		{"fifo.json", 1 << 20, AnyOwner, ErrNotRegular},
		{"adir", 1 << 20, AnyOwner, ErrNotRegular},
		{"missing.json", 1 << 20, AnyOwner, fs.ErrNotExist},
		{"../escape", 1 << 20, AnyOwner, nil}, // refused, checked below
	}
	for _, tt := range tests {
		start := time.Now()
		b, err := ReadBeneath(dir, tt.rel, tt.max, tt.owner)
		if time.Since(start) > time.Second {
			t.Errorf("%s: took %v", tt.rel, time.Since(start))
		}
		switch {
		case tt.rel == "../escape":
			if err == nil {
				t.Errorf("%s: read a path outside the dir", tt.rel)
			}
		case tt.want == nil && err != nil:
			t.Errorf("%s: %v", tt.rel, err)
		case tt.want != nil && !errors.Is(err, tt.want) && !(tt.want == syscall.ENOTDIR && errors.Is(err, ErrSymlink)):
			t.Errorf("%s: %v, want %v", tt.rel, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "$6$"):
			t.Errorf("%s: the error quotes the file: %v", tt.rel, err)
		case tt.want == nil && len(b) == 0:
			t.Errorf("%s: read nothing", tt.rel)
		}
	}
}

// ReadFile follows a link (an administrator's policy may be one) but
// refuses what it names when that is not a regular file: /dev/zero would
// never end, a FIFO would block.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "policy.toml")
	os.WriteFile(ok, []byte("version = 1\n"), 0o644)
	link := filepath.Join(dir, "link.toml")
	os.Symlink(ok, link)
	zero := filepath.Join(dir, "zero.toml")
	os.Symlink("/dev/zero", zero)
	fifo := filepath.Join(dir, "fifo.toml")
	syscall.Mkfifo(fifo, 0o644)
	for _, path := range []string{ok, link} {
		if b, err := ReadFile(path, 1<<20); err != nil || string(b) != "version = 1\n" {
			t.Errorf("%s: %q, %v", path, b, err)
		}
	}
	for _, path := range []string{zero, fifo, dir} {
		if _, err := ReadFile(path, 1<<20); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v, want not a regular file", path, err)
		}
	}
	var fe *FileError
	if _, err := ReadFile(zero, 1<<20); !errors.As(err, &fe) || fe.Path != zero {
		t.Errorf("error %v does not name the file", err)
	}
}

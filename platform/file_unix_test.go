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

// TestWhoCanReplace: a file only root can replace passes; one in a
// directory every user may write, a link, or a relative path does not.
func TestWhoCanReplace(t *testing.T) {
	shared, err := os.MkdirTemp("", "reaper-replace-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o777)
	exe := filepath.Join(shared, "reaper")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	link := filepath.Join(shared, "link")
	os.Symlink(exe, link)
	for _, tt := range []struct{ path, want string }{
		{exe, "writable by every user"},
		{link, "symbolic link"},
	} {
		if os.Geteuid() != 0 && tt.path == exe {
			tt.want = "belongs to uid" // a user's temp file: its owner's, before its directory is asked
		}
		if why, err := WhoCanReplace(tt.path); err != nil || !strings.Contains(why, tt.want) {
			t.Errorf("%s: %q, %v; want %q", tt.path, why, err, tt.want)
		}
	}
	if _, err := WhoCanReplace("reaper"); err == nil {
		t.Error("a relative path: no error")
	}
	if os.Geteuid() == 0 {
		safe := filepath.Join(t.TempDir(), "reaper") // root's, below /tmp's sticky bit
		os.WriteFile(safe, []byte("#!/bin/sh\n"), 0o755)
		if why, err := WhoCanReplace(safe); err != nil || why != "" {
			t.Errorf("control: %s: %q, %v; want only root", safe, why, err)
		}
	}
}

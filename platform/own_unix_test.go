//go:build unix

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Every kind of thing another user can put at one of reaper's own paths,
// in each way OpenOwn opens: each refused at once, never waited on,
// nothing written through it. The controls: a missing file is made, and
// the reaper's own file is opened (and emptied only for OwnTruncate).
func TestOpenOwn(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	outside := filepath.Join(t.TempDir(), "daemon.json")
	os.WriteFile(outside, []byte("precious"), 0o644)
	os.WriteFile(path("own"), []byte("mine"), 0o600)
	os.Symlink(outside, path("link"))
	os.Symlink(filepath.Join(dir, "nowhere"), path("dangling"))
	os.WriteFile(path("twice"), []byte("mine"), 0o600)
	os.Link(path("twice"), path("twice2"))
	syscall.Mkfifo(path("fifo"), 0o666)
	syscall.Mkfifo(path("fifo-read"), 0o666)
	os.Mkdir(path("adir"), 0o755)
	// A FIFO with a reader: a write open without O_NONBLOCK would succeed
	// too, and then the check after the open must refuse it.
	reader, err := os.OpenFile(path("fifo-read"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if os.Geteuid() == 0 {
		os.WriteFile(path("foreign"), []byte("theirs"), 0o666)
		os.Chown(path("foreign"), 65534, 65534)
	}

	for _, how := range []OwnOpen{OwnRead, OwnLock, OwnTruncate} {
		for _, tt := range []struct {
			name string
			want error
		}{
			{"link", ErrSymlink},
			{"dangling", ErrSymlink},
			{"twice", ErrNotOwn},
			{"fifo", ErrNotOwn},
			{"fifo-read", ErrNotOwn},
			{"adir", nil}, // refused; EISDIR for a write open, ErrNotOwn else
			{"foreign", ErrNotOwn},
		} {
			if tt.name == "foreign" && os.Geteuid() != 0 {
				continue // only root can give the test a file of another user's
			}
			done := make(chan error, 1)
			go func() {
				f, err := OpenOwn(path(tt.name), how)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("open %d of %s: %v, want %v", how, tt.name, err, tt.want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("open %d of %s blocked", how, tt.name)
			}
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Errorf("the link's target was changed: %q", b)
	}
	if b, _ := os.ReadFile(path("twice2")); string(b) != "mine" {
		t.Errorf("the hard link's other name was emptied: %q", b)
	}
	if _, err := os.Lstat(path("nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was made: %v", err)
	}

	// The controls.
	if b, err := ReadOwn(path("own"), 1<<10); err != nil || string(b) != "mine" {
		t.Errorf("control, its own file read: %q, %v", b, err)
	}
	if _, err := OpenOwn(path("missing"), OwnRead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file opened to read: %v, want not exist", err)
	}
	f, err := OpenOwn(path("made.lock"), OwnLock)
	if err != nil {
		t.Fatalf("control, a missing lock made: %v", err)
	}
	if fi, err := os.Stat(path("made.lock")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the lock made: %v, mode %v; want 0600, that its user can open again", err, fi.Mode().Perm())
	}
	if ok, err := TryLock(f); !ok || err != nil {
		t.Errorf("control, the lock taken: %v, %v", ok, err)
	}
	f2, _ := OpenOwn(path("made.lock"), OwnLock)
	if ok, err := TryLock(f2); ok || err != nil {
		t.Errorf("a held lock taken again: %v, %v", ok, err)
	}
	f2.Close()
	f.Close()
	f, err = OpenOwn(path("own"), OwnTruncate)
	if err != nil {
		t.Fatalf("control, its own record opened to write: %v", err)
	}
	f.Close()
	if fi, _ := os.Stat(path("own")); fi.Size() != 0 {
		t.Errorf("its own record not emptied: %d bytes", fi.Size())
	}
	if _, err := ReadOwn(path("twice"), 1<<10); !errors.Is(err, ErrNotOwn) {
		t.Errorf("a file with two names read: %v", err)
	}
}

// WriteOwn replaces the reaper's own file or makes a missing one, and
// leaves alone whatever else sits at the path: the link's target, the
// hard link's other name and the FIFO are untouched.
func TestWriteOwn(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "daemon.json")
	os.WriteFile(outside, []byte("precious"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "twice"), []byte("mine"), 0o600)
	os.Link(filepath.Join(dir, "twice"), filepath.Join(dir, "twice2"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o666)
	for _, name := range []string{"link", "twice", "fifo"} {
		if err := WriteOwn(filepath.Join(dir, name), []byte("new"), 0o600); err == nil {
			t.Errorf("%s: replaced", name)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Errorf("the link's target: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "fifo")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
	for _, name := range []string{"own", "own"} { // made, then replaced
		if err := WriteOwn(filepath.Join(dir, name), []byte("new "+name), 0o600); err != nil {
			t.Errorf("control %s: %v", name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "own")); string(b) != "new own" {
		t.Errorf("control: %q", b)
	}
}

// TestOwnFileDirLinks: a lock below a directory another user can write,
// reached through that user's link in the directory part, is refused,
// and nothing is made where the link points; so is the atomic write of a
// file there. A link root made in a directory only root writes (as
// /var/run → /run) is followed. The control: the same path with a real
// directory where the link was takes the lock.
func TestOwnFileDirLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attacker's directory is another user's")
	}
	base := t.TempDir()
	attacker := filepath.Join(base, "attacker")
	target := filepath.Join(base, "root-only")
	for _, d := range []string{attacker, target} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(target, 0o700)
	if err := os.Chown(attacker, 61001, 61001); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(attacker, "sub")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, 61001, 61001)
	if release, err := Lock(filepath.Join(link, "reaper.lock"), 0); err == nil {
		release()
		t.Error("a lock through another user's link in the directory part was taken")
	} else if !errors.Is(err, ErrSymlink) {
		t.Errorf("refused for %v, want ErrSymlink", err)
	}
	if err := WriteFileAtomic(filepath.Join(link, "reaper.prom"), []byte("x"), 0o644); err == nil || !errors.Is(err, ErrSymlink) {
		t.Errorf("the atomic write through the link: %v, want ErrSymlink", err)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("made in the link's target: %v", ents)
	}
	// Root's own link in a directory only root writes is followed.
	rootLinks := filepath.Join(base, "rootlinks")
	os.Mkdir(rootLinks, 0o755)
	if err := os.Symlink(target, filepath.Join(rootLinks, "run")); err != nil {
		t.Fatal(err)
	}
	release, err := Lock(filepath.Join(rootLinks, "run", "reaper.lock"), 0)
	if err != nil {
		t.Fatalf("root's link in root's directory: %v", err)
	}
	release()
	// The control: a real directory where the user's link was.
	os.Remove(link)
	if err := os.Mkdir(link, 0o755); err != nil {
		t.Fatal(err)
	}
	release, err = Lock(filepath.Join(link, "reaper.lock"), 0)
	if err != nil {
		t.Fatalf("control: the lock in a real directory: %v", err)
	}
	release()
}

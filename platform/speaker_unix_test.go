//go:build unix

package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Whose word a path is, as root must take it before it edits there: the
// first component on the way that is not root's (a link counts as its
// own owner's), or root's only when no one else can change any of it.
func TestPathSpeaker(t *testing.T) {
	if os.Geteuid() != 0 {
		dir := t.TempDir()
		if uid, _, err := PathSpeaker(filepath.Join(dir, "x", "settings.json")); err != nil || int(uid) != os.Geteuid() {
			t.Errorf("a path below this user's temp dir: uid %d, %v; want %d", uid, err, os.Geteuid())
		}
		return
	}
	root := t.TempDir() // root's 0700, below /tmp's sticky bit
	victim := filepath.Join(root, "daemon.json")
	os.WriteFile(victim, []byte("{}"), 0o644)
	home := filepath.Join(root, "home")
	os.Mkdir(home, 0o755)
	os.Symlink(victim, filepath.Join(home, "link.json"))
	os.Chown(home, 65534, 65534)
	rootLink := filepath.Join(root, "rootlink.json")
	os.Symlink(filepath.Join(home, "theirs.json"), rootLink) // root's link into A's home
	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	os.WriteFile(filepath.Join(open, "f.json"), nil, 0o644)
	for _, tt := range []struct {
		path    string
		uid     uint32
		wantErr string
	}{
		{victim, 0, ""},
		{filepath.Join(root, "new", "settings.json"), 0, ""},
		{filepath.Join(home, "link.json"), 65534, ""},
		{filepath.Join(home, "new", "settings.json"), 65534, ""},
		{rootLink, 65534, ""},
		{filepath.Join(open, "f.json"), 0, "writable by every user"},
		{filepath.Join(open, "new.json"), 0, "writable by every user"},
		{"relative", 0, "not an absolute path"},
	} {
		uid, _, err := PathSpeaker(tt.path)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: uid %d, %v; want an error %q", tt.path, uid, err, tt.wantErr)
			}
		case err != nil || uid != tt.uid:
			t.Errorf("%s: uid %d, %v; want %d", tt.path, uid, err, tt.uid)
		}
	}
}

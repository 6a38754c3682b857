package watch

import (
	"os"
	"path/filepath"
	"testing"
)

// A file made, renamed in or removed in a watched dir is told, with the
// dir's uid; a file written in place is not, nor one made in a dir not
// watched (the controls); a dir dropped from the set is no longer
// watched; a missing dir fails, and so does one reached through a link —
// as the last component, or a directory on the way a user swapped for a
// link (issue 51, attack 8: IN_DONT_FOLLOW guarded only the last) — and
// one that is not the uid's whose state it is said to be.
func TestDirs(t *testing.T) {
	d, err := NewDirs()
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	defer d.Close()
	base := t.TempDir()
	uidA, uidB := uint32(os.Getuid()), uint32(os.Getuid())
	if os.Geteuid() == 0 {
		uidA, uidB = 1001, 1002
	}
	a, b, other := Dir{Path: filepath.Join(base, "a"), UID: uidA}, Dir{Path: filepath.Join(base, "b"), UID: uidB}, filepath.Join(base, "other")
	for _, p := range []string{a.Path, b.Path, other} {
		os.Mkdir(p, 0o755)
	}
	os.Chown(a.Path, int(uidA), int(uidA))
	os.Chown(b.Path, int(uidB), int(uidB))
	os.WriteFile(filepath.Join(a.Path, "old"), []byte("1"), 0o644)
	os.Symlink(a.Path, filepath.Join(base, "link"))
	link := Dir{Path: filepath.Join(base, "link"), UID: uidA}
	missing := Dir{Path: filepath.Join(base, "missing"), UID: uidA}
	// A home whose .claude a user replaced by a link to a dir elsewhere:
	// the sessions dir below it is reached through the link.
	elsewhere := filepath.Join(t.TempDir(), "sessions")
	os.Mkdir(elsewhere, 0o755)
	os.Chown(elsewhere, int(uidA), int(uidA))
	os.Symlink(filepath.Dir(elsewhere), filepath.Join(base, "hop"))
	onTheWay := Dir{Path: filepath.Join(base, "hop", "sessions"), UID: uidA}
	notTheirs := Dir{Path: other, UID: uidA + 7}
	if failed := d.Set([]Dir{a, b, link, missing, onTheWay, notTheirs}); failed != 4 || d.Len() != 2 {
		t.Fatalf("Set: %d failed, %d watched; want 4 (the link, the missing dir, the link on the way, another's dir) and 2", failed, d.Len())
	}
	quiet := func(why string) { t.Helper(); quietDirs(t, d, why) }
	told := func(want Dir, name, why string) { t.Helper(); toldDir(t, d, want, name, why) }
	os.WriteFile(filepath.Join(other, "new"), nil, 0o644)
	quiet("a file made in a dir not watched")
	// Written in place (a client at a pid a dead one had writes over
	// its file): told once it is closed.
	os.WriteFile(filepath.Join(a.Path, "old"), []byte("2"), 0o644)
	told(a, "old", "a file written in place")
	os.WriteFile(filepath.Join(a.Path, "session.json"), nil, 0o644)
	told(a, "session.json", "a file made")
	told(a, "session.json", "a file made, then closed")
	os.WriteFile(filepath.Join(other, "tmp"), nil, 0o644)
	quiet("a file written in a dir not watched")
	os.Rename(filepath.Join(other, "tmp"), filepath.Join(b.Path, "session.json"))
	told(b, "session.json", "a file renamed in")
	d.Set([]Dir{b})
	os.Remove(filepath.Join(a.Path, "session.json"))
	quiet("a file removed in a dir dropped from the set")
	os.Remove(filepath.Join(b.Path, "session.json"))
	told(b, "session.json", "a file removed")
}

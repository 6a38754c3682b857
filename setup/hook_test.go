package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform/child"
)

func hookFor(out *bytes.Buffer) *Hook {
	return &Hook{Client: client.Info{Title: "Claude Code", Hook: claudeHook}, Out: out}
}

// The user's file is edited where it is: through a dotfiles link (the
// link stays a link), in its own mode, with one backup; uninstall gives
// the bytes back.
func TestHookKeepsLinkModeBytes(t *testing.T) {
	if runtime.GOOS == "windows" {
		skips.Skip(t, linksWhy)
	}
	dir := t.TempDir()
	dotfiles := filepath.Join(dir, "dotfiles", "settings.json")
	os.MkdirAll(filepath.Dir(dotfiles), 0o755)
	mine := "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"SessionStart\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}\n        ]\n    }\n}\n"
	os.WriteFile(dotfiles, []byte(mine), 0o640)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(dotfiles, link); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	h := hookFor(&out)
	for range 2 { // the second install changes nothing
		if err := h.Install(link, "/usr/bin/reaper"); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v", err)
	}
	b, _ := os.ReadFile(dotfiles)
	if !strings.Contains(string(b), HookMark) {
		t.Fatalf("the link's target has no hook:\n%s", b)
	}
	if fi, _ := os.Stat(dotfiles); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %04o, want the file's own 0640", fi.Mode().Perm())
	}
	if backups, _ := filepath.Glob(filepath.Join(dir, "*", "*.reaper-backup*")); len(backups) != 1 {
		t.Errorf("backups %v, want one", backups)
	}
	if !strings.Contains(out.String(), "unchanged") {
		t.Errorf("the second install said:\n%s", out.String())
	}
	if err := h.Uninstall(link); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dotfiles); string(b) != mine {
		t.Errorf("after uninstall:\n%q\nwant\n%q", b, mine)
	}
}

// A file reaper should not change is refused, and left as it was: one
// the user made read-only, a link to nothing. (Another user's file is
// checked as root, in TestHookRefusesAnotherUsersFile.)
func TestHookRefuses(t *testing.T) {
	if runtime.GOOS == "windows" {
		skips.Skip(t, linksWhy)
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("{}\n"), 0o444)
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	h := hookFor(&bytes.Buffer{})
	// Root too: root may write any file, but the mode is the user's word.
	if err := h.Install(ro, "/usr/bin/reaper"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a read-only file: %v", err)
	}
	if b, _ := os.ReadFile(ro); string(b) != "{}\n" {
		t.Errorf("the read-only file changed: %q", b)
	}
	if err := h.Install(dangling, "/usr/bin/reaper"); err == nil || !strings.Contains(err.Error(), "not there") {
		t.Errorf("a dangling link: %v", err)
	}
	// The control: a writable file of the user's own is edited.
	rw := filepath.Join(dir, "rw.json")
	os.WriteFile(rw, []byte("{}\n"), 0o600)
	if err := h.Install(rw, "/usr/bin/reaper"); err != nil {
		t.Errorf("a writable file: %v", err)
	}
}

// As root, a settings file that another user owns, or that is reached
// through a directory or link of theirs, is never edited by root: the
// edit goes to a child running as that user (the binary's tests run it
// for real: cmd/reaper's TestAttackRootHookEdit). The control: root's
// own file in root's own directory is edited by root.
func TestHookAsTheFilesUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chowns files to another user")
	}
	var ran []child.ChildSpec
	runChild = func(_ context.Context, spec child.ChildSpec) ([]byte, error) {
		ran = append(ran, spec)
		return nil, errors.New("not run in this test")
	}
	t.Cleanup(func() { runChild = child.RunChild })
	root := t.TempDir()
	victim := filepath.Join(root, "daemon.json")
	os.WriteFile(victim, []byte("{}\n"), 0o644)
	theirs := filepath.Join(root, "theirs.json")
	os.WriteFile(theirs, []byte("{}\n"), 0o644)
	os.Chown(theirs, 65534, 65534)
	home := filepath.Join(root, "home")
	os.Mkdir(home, 0o755)
	os.Symlink(victim, filepath.Join(home, "settings.json"))
	os.Lchown(filepath.Join(home, "settings.json"), 65534, 65534)
	os.Chown(home, 65534, 65534)
	for _, path := range []string{theirs, filepath.Join(home, "settings.json"), filepath.Join(home, "new", "settings.json")} {
		ran = nil
		err := hookFor(&bytes.Buffer{}).Install(path, "/usr/bin/reaper")
		if err == nil || !strings.Contains(err.Error(), "is uid 65534's") || len(ran) != 1 {
			t.Errorf("%s: %v, %d children; want the edit handed to uid 65534", path, err, len(ran))
			continue
		}
		if s := ran[0]; !s.Drop || s.UID != 65534 || !slices.Contains(s.Args, path) {
			t.Errorf("%s: the child %+v", path, s)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "{}\n" {
		t.Errorf("root wrote through the user's link: %q", b)
	}
	ran = nil
	own := filepath.Join(root, "own.json")
	os.WriteFile(own, []byte("{}\n"), 0o600)
	if err := hookFor(&bytes.Buffer{}).Install(own, "/usr/bin/reaper"); err != nil || len(ran) != 0 {
		t.Errorf("control, root's own file: %v, %d children", err, len(ran))
	}
}

// --dry-run prints a unified diff and writes nothing.
func TestHookDryRunDiff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte("{\n  \"model\": \"opus\"\n}\n"), 0o600)
	var out bytes.Buffer
	h := hookFor(&out)
	h.DryRun = true
	if err := h.Install(path, "/usr/bin/reaper"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"--- " + path, "+++ " + path, "@@ -1,3 +1,4 @@", "+  \"hooks\": {\"SessionStart\": [", "   \"model\": \"opus\""} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "{\n  \"model\": \"opus\"\n}\n" {
		t.Errorf("--dry-run wrote %q", b)
	}
}

// A binary that will not last is refused; a Homebrew keg is named by its
// opt link; any other path is kept.
func TestBinaryPaths(t *testing.T) {
	cached := "/srv/cache/6f/6fb77214a1b0576781a9490b96d8d0c9f122101aef20186cdf01a45f8b5c34f2-d/reaper" // go run's, GOCACHE=/srv/cache
	for _, p := range []string{"/tmp/go-build1234/b001/exe/reaper", "/home/u/.npm/_npx/abc123/node_modules/@orphanreaper/reaper-linux-x64/bin/reaper", cached} {
		if why, fix := Transient(p); why == "" || fix == "" {
			t.Errorf("%s: not transient", p)
		}
	}
	t.Setenv("GOCACHE", "/srv/other")
	if !inGoCache("/srv/other/x/reaper", os.Getenv("GOCACHE")) {
		t.Error("a binary below $GOCACHE is not taken for the cache's")
	}
	for _, p := range []string{"/usr/bin/reaper", "/home/u/go/bin/reaper", "/usr/lib/node_modules/@orphanreaper/reaper-linux-x64/bin/reaper",
		"/srv/6f/6fb7-d/reaper", "/srv/zz/" + strings.Repeat("z", 64) + "-d/reaper"} {
		if why, _ := Transient(p); why != "" {
			t.Errorf("%s: transient (%s)", p, why)
		}
	}
	if runtime.GOOS == "windows" {
		return // Homebrew's opt link: below, a symbolic link (linksWhy)
	}
	prefix := t.TempDir()
	keg := filepath.Join(prefix, "Cellar", "reaper", "1.2.3", "bin", "reaper")
	os.MkdirAll(filepath.Dir(keg), 0o755)
	os.WriteFile(keg, []byte("x"), 0o755)
	if got := Stable(keg); got != keg {
		t.Errorf("no opt link yet: %s, want the path as it is", got)
	}
	os.MkdirAll(filepath.Join(prefix, "opt"), 0o755)
	os.Symlink(filepath.Join("..", "Cellar", "reaper", "1.2.3"), filepath.Join(prefix, "opt", "reaper"))
	if got, want := Stable(keg), filepath.Join(prefix, "opt", "reaper", "bin", "reaper"); got != want {
		t.Errorf("Stable(%s) = %s, want %s", keg, got, want)
	}
	// Scoop's app dir: a version's reaper.exe as its current junction (a
	// link here), once there is one to this very file.
	scoop := filepath.Join(t.TempDir(), "apps", "reaper")
	app := filepath.Join(scoop, "1.2.3", "reaper.exe")
	os.MkdirAll(filepath.Dir(app), 0o755)
	os.WriteFile(app, []byte("x"), 0o755)
	if got := Stable(app); got != app {
		t.Errorf("no current junction yet: %s, want the path as it is", got)
	}
	os.Symlink("1.2.3", filepath.Join(scoop, "current"))
	if got, want := Stable(app), filepath.Join(scoop, "current", "reaper.exe"); got != want {
		t.Errorf("Stable(%s) = %s, want %s", app, got, want)
	}
}

// Issue 52, item 9: install on a file it created rewrote it on the second
// run, and uninstall left "{}" and a backup where there had been no file.
// A file install makes is made as add makes any other (a second install
// finds it unchanged), and uninstall removes it whole, with no backup.
// The control: a file the user had keeps existing after uninstall.
func TestHookMadeFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	var out bytes.Buffer
	h := hookFor(&out)
	if err := h.Install(path, "/usr/bin/reaper"); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	out.Reset()
	if err := h.Install(path, "/usr/bin/reaper"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, first) || !strings.Contains(out.String(), "unchanged") {
		t.Errorf("a second install changed the file it made:\n%s\n%s", first, out.String())
	}
	if err := h.Uninstall(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("uninstall left the file install made: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("uninstall left %v", names)
	}
	// The control: the user's own "{}" stays a file after a round trip.
	os.WriteFile(path, []byte("{}\n"), 0o600)
	h.Install(path, "/usr/bin/reaper")
	h.Uninstall(path)
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Errorf("control, the user's own file: %q, %v", b, err)
	}
}

// linksWhy is why the tests of symbolic links do not run on Windows.
const linksWhy = "symbolic links: wine shows a Unix link to the Windows side as the file it names (no reparse point), and Windows makes one only with a privilege"

// On Windows the hook is PowerShell's on any client — its path a single-
// quoted string however it is spelled (a space, a quote), its arguments
// each quoted, the mark a comment — and the entry names PowerShell as its
// shell for a client that picks a hook's shell by it (Claude Code, Qwen
// Code; Gemini CLI runs PowerShell there always: no field). The binary
// read back from the command is the path; the entry is reaper's to find
// and remove. The control: on Unix, the shell's form, no shell field.
func TestWindowsHookEntry(t *testing.T) {
	exe := `C:\Users\Jo O'Neil\AppData\Roaming\npm\node_modules\@orphanreaper\reaper-win32-x64\bin\reaper.exe`
	for _, c := range []struct {
		pick bool
		goos string
	}{{true, "windows"}, {false, "windows"}, {true, "linux"}} {
		h := hookFor(nil)
		in := *h.Client.Hook
		in.PickShell = c.pick
		h.Client.Hook = &in
		entry := h.entryFor(c.goos, exe)(HookMark)
		var e struct {
			Hooks []struct{ Command, Shell string }
		}
		if err := json.Unmarshal([]byte(entry), &e); err != nil || len(e.Hooks) != 1 {
			t.Fatalf("%+v: %s does not parse: %v", c, entry, err)
		}
		command, shell := e.Hooks[0].Command, e.Hooks[0].Shell
		wantShell := map[bool]string{true: "powershell"}[c.pick && c.goos == "windows"]
		if shell != wantShell {
			t.Errorf("%+v: shell %q, want %q", c, shell, wantShell)
		}
		if _, _, ok := ours([]byte(entry)); !ok {
			t.Errorf("%+v: the entry is not found as reaper's", c)
		}
		if c.goos != "windows" {
			if !strings.HasPrefix(command, "("+exe+" reap ") {
				t.Errorf("control: %q is not the Unix shell's form", command)
			}
			continue
		}
		want := `Start-Process -WindowStyle Hidden -FilePath 'C:\Users\Jo O''Neil\AppData\Roaming\npm\node_modules\@orphanreaper\reaper-win32-x64\bin\reaper.exe' -ArgumentList 'reap','--quiet','--lock-timeout','1s' ` + HookMark
		if command != want {
			t.Errorf("%+v: command\n%s\nwant\n%s", c, command, want)
		}
		if got := HookBinary(command); got != exe {
			t.Errorf("HookBinary: %q, want %q", got, exe)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// `reaper service install` writes the shipped unit with this binary's own
// path, says so, changes nothing the second time, writes nothing with
// --dry-run, replaces no file it did not write, and `uninstall` removes
// exactly what it wrote. (Below a scratch root: no service manager is
// asked anything.)
func TestServiceInstall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the systemd units; launchd's plists are checked by check-packaging")
	}
	root, home := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME="}
	exe, _ := filepath.EvalSymlinks(clitest.Bin)
	unit := filepath.Join(root, home, ".config", "systemd", "user", "reaper-watch.service")
	svc := func(args ...string) clitest.Result {
		return clitest.RunReaper(t, env, append([]string{"service"}, append(args, "--root", root)...)...)
	}

	if r := svc("install", "--user", "--dry-run"); r.Code != 0 || !strings.Contains(r.Stdout, "would write "+unit) || !strings.Contains(r.Stdout, "would run  systemctl --user enable --now reaper-watch.service") {
		t.Errorf("--dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(unit); err == nil {
		t.Fatal("--dry-run wrote the unit")
	}
	r := svc("install", "--user")
	b, err := os.ReadFile(unit)
	if r.Code != 0 || err != nil || !strings.Contains(string(b), "\nExecStart="+exe+" watch --quiet") || !strings.Contains(r.Stdout, "wrote") {
		t.Fatalf("install: exit %d, %v\n%s%s\n%s", r.Code, err, r.Stdout, r.Stderr, b)
	}
	if r := svc("install", "--user"); r.Code != 0 || !strings.Contains(r.Stdout, "unchanged  "+unit) {
		t.Errorf("install again: exit %d, want the unit unchanged\n%s", r.Code, r.Stdout)
	}
	if r := svc("install", "--user", "--timer"); r.Code != 0 || !strings.Contains(r.Stdout, "reaper.timer") {
		t.Errorf("--timer: exit %d\n%s", r.Code, r.Stdout)
	}

	// A unit of the same name that install did not write is not replaced,
	// and not removed.
	system := filepath.Join(root, "etc", "systemd", "system", "reaper-watch.service")
	os.MkdirAll(filepath.Dir(system), 0o755)
	os.WriteFile(system, []byte("[Service]\nExecStart=/opt/mine\n"), 0o644)
	// A system service runs only a binary root alone can replace: the
	// test's own build may be a user's, so a root-owned stand-in.
	rootOwned, _ := filepath.EvalSymlinks("/bin/true")
	if r := svc("install", "--user=false", "--binary", rootOwned); r.Code == 0 || !strings.Contains(r.Stderr, "not written by reaper service install") {
		t.Errorf("install over a foreign unit: exit %d, want a refusal\n%s", r.Code, r.Stderr)
	}
	if r := svc("uninstall", "--user=false"); r.Code != 0 {
		t.Errorf("uninstall, system: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(system); string(b) != "[Service]\nExecStart=/opt/mine\n" {
		t.Errorf("the foreign unit changed: %q", b)
	}

	if r := svc("uninstall", "--user"); r.Code != 0 || !strings.Contains(r.Stdout, "removed    "+unit) {
		t.Errorf("uninstall: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, name := range []string{"reaper-watch.service", "reaper.service", "reaper.timer"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(unit), name)); err == nil {
			t.Errorf("uninstall left %s", name)
		}
	}
}

// A system service runs its binary as root: `service install` refuses one
// another user could replace — in a directory every user may write, or
// owned by a user — and says how to install a root-owned copy; --user
// takes the same binary (it runs as the user). As root, the copy made as
// the refusal says is installed, and the unit runs it (the control).
func TestServiceInstallRefusesReplaceableBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the systemd units")
	}
	root, home := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME="}
	svc := func(args ...string) clitest.Result {
		return clitest.RunReaper(t, env, append([]string{"service", "install"}, append(args, "--root", root)...)...)
	}
	shared, err := os.MkdirTemp("", "reaper-svc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o777)
	open := filepath.Join(shared, "reaper")
	copyFile(t, clitest.Bin, open, 0o755)

	system := filepath.Join(root, "etc", "systemd", "system", "reaper-watch.service")
	for _, args := range [][]string{{"--binary", open}, {"--binary", open, "--timer"}} {
		r := svc(append([]string{"--user=false"}, args...)...)
		// As root the copy is root's and its directory everyone's; as a
		// user, the copy is the user's: either way not only root's.
		if r.Code == 0 || !strings.Contains(r.Stderr, "could be replaced by a user other than root") || !strings.Contains(r.Stderr, "sudo install -m 0755 "+open+" /usr/local/bin/reaper") {
			t.Errorf("%v: exit %d, want a refusal that names the fix\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
		if _, err := os.Stat(system); err == nil {
			t.Fatalf("%v: the refused install wrote %s", args, system)
		}
	}
	if r := svc("--user", "--binary", open); r.Code != 0 {
		t.Errorf("--user with the same binary: exit %d\n%s", r.Code, r.Stderr)
	}

	if os.Geteuid() != 0 {
		t.Log("not root: the root-owned copy is root's to make (CI runs as root)")
		return
	}
	safe := filepath.Join(t.TempDir(), "bin") // below /tmp (sticky), 0700 and 0755, root's
	os.Mkdir(safe, 0o755)
	copyFile(t, clitest.Bin, filepath.Join(safe, "reaper"), 0o755)
	r := svc("--user=false", "--binary", filepath.Join(safe, "reaper"))
	b, _ := os.ReadFile(system)
	if r.Code != 0 || !strings.Contains(string(b), "\nExecStart="+filepath.Join(safe, "reaper")+" watch --quiet") {
		t.Fatalf("control: a root-owned copy: exit %d\n%s%s\n%s", r.Code, r.Stdout, r.Stderr, b)
	}
	os.Chown(filepath.Join(safe, "reaper"), 65534, 65534)
	if r := svc("--user=false", "--binary", filepath.Join(safe, "reaper")); r.Code == 0 || !strings.Contains(r.Stderr, "belongs to uid 65534") {
		t.Errorf("a copy owned by nobody: exit %d, want a refusal\n%s", r.Code, r.Stderr)
	}
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
	exe, _ := filepath.EvalSymlinks(reaperBin)
	unit := filepath.Join(root, home, ".config", "systemd", "user", "reaper-watch.service")
	svc := func(args ...string) result {
		return runReaper(t, env, append([]string{"service"}, append(args, "--root", root)...)...)
	}

	if r := svc("install", "--user", "--dry-run"); r.code != 0 || !strings.Contains(r.stdout, "would write "+unit) || !strings.Contains(r.stdout, "would run  systemctl --user enable --now reaper-watch.service") {
		t.Errorf("--dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(unit); err == nil {
		t.Fatal("--dry-run wrote the unit")
	}
	r := svc("install", "--user")
	b, err := os.ReadFile(unit)
	if r.code != 0 || err != nil || !strings.Contains(string(b), "\nExecStart="+exe+" watch --quiet") || !strings.Contains(r.stdout, "wrote") {
		t.Fatalf("install: exit %d, %v\n%s%s\n%s", r.code, err, r.stdout, r.stderr, b)
	}
	if r := svc("install", "--user"); r.code != 0 || !strings.Contains(r.stdout, "unchanged  "+unit) {
		t.Errorf("install again: exit %d, want the unit unchanged\n%s", r.code, r.stdout)
	}
	if r := svc("install", "--user", "--timer"); r.code != 0 || !strings.Contains(r.stdout, "reaper.timer") {
		t.Errorf("--timer: exit %d\n%s", r.code, r.stdout)
	}

	// A unit of the same name that install did not write is not replaced,
	// and not removed.
	system := filepath.Join(root, "etc", "systemd", "system", "reaper-watch.service")
	os.MkdirAll(filepath.Dir(system), 0o755)
	os.WriteFile(system, []byte("[Service]\nExecStart=/opt/mine\n"), 0o644)
	if r := svc("install", "--user=false"); r.code == 0 || !strings.Contains(r.stderr, "not written by reaper service install") {
		t.Errorf("install over a foreign unit: exit %d, want a refusal\n%s", r.code, r.stderr)
	}
	if r := svc("uninstall", "--user=false"); r.code != 0 {
		t.Errorf("uninstall, system: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(system); string(b) != "[Service]\nExecStart=/opt/mine\n" {
		t.Errorf("the foreign unit changed: %q", b)
	}

	if r := svc("uninstall", "--user"); r.code != 0 || !strings.Contains(r.stdout, "removed    "+unit) {
		t.Errorf("uninstall: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"reaper-watch.service", "reaper.service", "reaper.timer"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(unit), name)); err == nil {
			t.Errorf("uninstall left %s", name)
		}
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// On Windows `reaper init --dry-run` plans this user's logon task — its
// XML in %LOCALAPPDATA%\reaper, registered by schtasks — and writes
// nothing; a client hook is refused, saying why; `service install --user`
// writes the task's XML (UTF-16, reaper's mark) and registers the task
// with Task Scheduler, and `service uninstall --user` removes both. The
// task is this test's own (--task), never the user's reaper-watch; under
// wine Task Scheduler runs no task, so nothing is started.
func TestWindowsInit(t *testing.T) {
	profile := t.TempDir()
	local := filepath.Join(profile, "AppData", "Local")
	env := []string{"USERPROFILE=" + profile, "APPDATA=" + filepath.Join(profile, "AppData", "Roaming"), "LOCALAPPDATA=" + local}
	r := clitest.RunReaper(t, env, "init", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "this user's logon task reaper-watch") || !strings.Contains(r.Stdout, "no client hooks: reaper installs none on Windows yet") {
		t.Errorf("init --dry-run: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if entries, _ := os.ReadDir(profile); len(entries) != 0 {
		t.Errorf("init --dry-run wrote %v in %s", entries, profile)
	}
	r = clitest.RunReaper(t, env, "hook", "install", "claude-code", "--dry-run")
	if r.Code == 0 || !strings.Contains(r.Stderr, "installs no client hook on Windows yet") {
		t.Errorf("hook install: exit %d\n%s", r.Code, r.Stderr)
	}

	task := fmt.Sprintf("reaper-test-%d", os.Getpid())
	schtasks := filepath.Join(os.Getenv("SystemRoot"), "System32", "schtasks.exe")
	t.Cleanup(func() { exec.Command(schtasks, "/Delete", "/TN", task, "/F").Run() })
	// Where Task Scheduler keeps a registered task's definition: readable
	// under wine and by an administrator (the CI runner).
	registered := func() (bool, bool) {
		_, err := os.Stat(filepath.Join(os.Getenv("SystemRoot"), "System32", "Tasks", task))
		return err == nil, err == nil || os.IsNotExist(err)
	}
	r = clitest.RunReaper(t, env, "service", "install", "--user", "--task", task)
	xmlPath := filepath.Join(local, "reaper", task+".xml")
	b, err := os.ReadFile(xmlPath)
	if r.Code != 0 || err != nil || len(b) < 2 || b[0] != 0xff || b[1] != 0xfe {
		t.Fatalf("service install --user: exit %d, its XML %v (% x…)\n%s\n%s", r.Code, err, b[:min(len(b), 4)], r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "ran        schtasks /Create /TN "+task) {
		t.Errorf("service install did not say it registered the task:\n%s", r.Stdout)
	}
	if ok, known := registered(); known && !ok {
		t.Error("the task is not registered with Task Scheduler")
	}
	r = clitest.RunReaper(t, env, "service", "uninstall", "--user", "--task", task)
	if r.Code != 0 || !strings.Contains(r.Stdout, "ran        schtasks /Delete /TN "+task) {
		t.Errorf("service uninstall --user: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(xmlPath); err == nil {
		t.Error("uninstall left the task's XML")
	}
	if ok, known := registered(); known && ok {
		t.Error("uninstall left the task registered")
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// On Windows `reaper init --dry-run` plans this user's logon task — its
// XML in %LOCALAPPDATA%\reaper, registered by schtasks — and writes
// nothing; `service install --user`
// writes the task's XML (UTF-16, reaper's mark) and registers the task
// with Task Scheduler, and `service uninstall --user` removes both. The
// task is this test's own (--task), never the user's reaper-watch; under
// wine Task Scheduler runs no task, so nothing is started.
func TestWindowsInit(t *testing.T) {
	profile := t.TempDir()
	local := filepath.Join(profile, "AppData", "Local")
	env := []string{"USERPROFILE=" + profile, "APPDATA=" + filepath.Join(profile, "AppData", "Roaming"), "LOCALAPPDATA=" + local}
	r := clitest.RunReaper(t, env, "init", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "this user's logon task reaper-watch") {
		t.Errorf("init --dry-run: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if entries, _ := os.ReadDir(profile); len(entries) != 0 {
		t.Errorf("init --dry-run wrote %v in %s", entries, profile)
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

// hookEnv is a profile of the test's own with a Claude Code config dir
// whose settings a Windows editor wrote (CRLF), and its environment.
func hookEnv(t *testing.T) (env []string, settings string, original []byte) {
	profile := t.TempDir()
	dir := filepath.Join(profile, ".claude")
	os.MkdirAll(dir, 0o755)
	settings = filepath.Join(dir, "settings.json")
	original = []byte("{\r\n  \"model\": \"opus\"\r\n}\r\n")
	if err := os.WriteFile(settings, original, 0o644); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(profile, "AppData", "Local")
	return []string{"USERPROFILE=" + profile, "APPDATA=" + filepath.Join(profile, "AppData", "Roaming"), "LOCALAPPDATA=" + local, "CLAUDE_CONFIG_DIR=" + dir}, settings, original
}

// `reaper hook install claude-code` on Windows edits a Windows-pathed
// settings file in place — what was there kept byte for byte, CRLF and
// all — adding an entry whose command is PowerShell's Start-Process of
// this reaper.exe, with "shell": "powershell" (Claude Code runs Git Bash
// otherwise); `hook uninstall` gives the original bytes back.
func TestWindowsHookInstall(t *testing.T) {
	env, settings, original := hookEnv(t)
	r := clitest.RunReaper(t, env, "hook", "install", "claude-code")
	if r.Code != 0 {
		t.Fatalf("hook install: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	b, _ := os.ReadFile(settings)
	var s struct {
		Model string
		Hooks struct {
			SessionStart []struct {
				Hooks []struct{ Command, Shell string }
			}
		}
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Hooks.SessionStart) != 1 || len(s.Hooks.SessionStart[0].Hooks) != 1 {
		t.Fatalf("the edited settings: %v\n%s", err, b)
	}
	h := s.Hooks.SessionStart[0].Hooks[0]
	if !strings.HasPrefix(h.Command, "Start-Process -WindowStyle Hidden -FilePath '") || !strings.Contains(h.Command, `\reaper.exe' -ArgumentList 'reap',`) || h.Shell != "powershell" || s.Model != "opus" {
		t.Errorf("the hook: %+v (model %q)", h, s.Model)
	}
	if !bytes.HasPrefix(b, []byte("{\r\n")) || !bytes.Contains(b, []byte("\"model\": \"opus\"\r\n")) {
		t.Errorf("the file's own lines were not kept:\n%q", b)
	}
	r = clitest.RunReaper(t, env, "hook", "uninstall", "claude-code")
	if b, _ := os.ReadFile(settings); r.Code != 0 || !bytes.Equal(b, original) {
		t.Errorf("hook uninstall: exit %d; the file %q, want %q back\n%s", r.Code, b, original, r.Stderr)
	}
}

// The hook's command, run as Claude Code, Gemini CLI and Qwen Code run it
// on Windows (powershell -NoProfile -NonInteractive -Command), starts the
// reap: its lock appears in the profile's %LOCALAPPDATA%\reaper, and the
// command has returned (Start-Process does not wait). Not under wine,
// whose powershell.exe is a stub that runs nothing.
func TestWindowsHookRunsInPowerShell(t *testing.T) {
	if _, err := os.Stat(filepath.Join(os.Getenv("SystemRoot"), "System32", "wineboot.exe")); err == nil {
		t.Skip("wine's powershell.exe is a stub that runs nothing: the windows-latest job runs this")
	}
	ps := filepath.Join(os.Getenv("SystemRoot"), "System32", "WindowsPowerShell", "v1.0", "powershell.exe")
	if _, err := os.Stat(ps); err != nil {
		t.Skipf("no Windows PowerShell here: %v", err)
	}
	env, settings, _ := hookEnv(t)
	if r := clitest.RunReaper(t, env, "hook", "install", "claude-code"); r.Code != 0 {
		t.Fatalf("hook install: exit %d\n%s", r.Code, r.Stderr)
	}
	b, _ := os.ReadFile(settings)
	var s struct {
		Hooks struct {
			SessionStart []struct{ Hooks []struct{ Command string } }
		}
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Hooks.SessionStart) != 1 {
		t.Fatalf("the edited settings: %v\n%s", err, b)
	}
	cmd := exec.Command(ps, "-NoProfile", "-NonInteractive", "-Command", s.Hooks.SessionStart[0].Hooks[0].Command)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the hook's command: %v\n%s", err, out)
	}
	var lock string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LOCALAPPDATA="); ok {
			lock = filepath.Join(v, "reaper", "reaper.lock")
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(lock); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook's reap did not run: no %s after 60 s", lock)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

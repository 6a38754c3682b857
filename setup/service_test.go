package setup

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"
)

// On a host that runs no service manager (a container, WSL without
// systemd), install writes the unit and says nothing starts it, with a
// non-zero exit and what to run instead — not three "not run" lines and
// exit 0.
func TestServiceWithoutManager(t *testing.T) {
	if runtime.GOOS != "linux" || HasServiceManager() {
		t.Skip("this host runs a service manager: install would start the unit")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	bin := filepath.Join(home, "reaper")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	var out bytes.Buffer
	err := (&Service{User: true, Binary: bin, Out: &out}).Install(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no service manager runs here") || !strings.Contains(err.Error(), "cron") {
		t.Errorf("install without a service manager: %v\n%s", err, out.String())
	}
	unit := filepath.Join(home, ".config", "systemd", "user", WatchUnit)
	if b, err := os.ReadFile(unit); err != nil || !strings.Contains(string(b), "ExecStart="+bin+" watch") {
		t.Errorf("the unit: %v\n%s", err, b)
	}
	// Uninstall removes what install wrote, with nothing to ask.
	if err := (&Service{User: true, Out: &out}).Uninstall(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unit); err == nil {
		t.Error("uninstall left the unit")
	}
}

// This user's logon task on Windows, planned on any OS: a UTF-16 XML
// file with reaper's mark (uninstall's sign of its own), well-formed,
// that runs `reaper watch --quiet` under a windowless console host with
// the user's own rights — the binary's path quoted and escaped, spaces
// and all — and schtasks to register it by name and remove it. A system
// service and the timer are refused (not built for Windows).
func TestWindowsTaskPlan(t *testing.T) {
	exe := `C:\Users\Jo Smith\AppData\Roaming\npm\node_modules\@orphanreaper\reaper-win32-x64\bin\reaper&co.exe`
	p, err := (&Service{User: true, Task: "reaper-test"}).plan("windows", exe)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.files) != 1 || filepath.Base(p.files[0].path) != "reaper-test.xml" {
		t.Fatalf("files %+v: want reaper-test.xml alone", p.files)
	}
	b := p.files[0].data
	if len(b) < 2 || b[0] != 0xff || b[1] != 0xfe || !HasMark(b) {
		t.Fatalf("the task's XML is not UTF-16LE with a byte-order mark and reaper's mark: % x…", b[:min(len(b), 16)])
	}
	u := make([]uint16, (len(b)-2)/2)
	for i := range u {
		u[i] = uint16(b[2+2*i]) | uint16(b[3+2*i])<<8
	}
	text := strings.ReplaceAll(string(utf16.Decode(u)), `encoding="UTF-16"`, `encoding="UTF-8"`)
	var task struct {
		Command   string `xml:"Actions>Exec>Command"`
		Arguments string `xml:"Actions>Exec>Arguments"`
		Logon     string `xml:"Principals>Principal>LogonType"`
		RunLevel  string `xml:"Principals>Principal>RunLevel"`
		Trigger   string `xml:"Triggers>LogonTrigger>Enabled"`
	}
	if err := xml.Unmarshal([]byte(text), &task); err != nil {
		t.Fatalf("the task's XML does not parse: %v\n%s", err, text)
	}
	want := `--headless "` + exe + `" watch --quiet`
	if task.Command != `%SystemRoot%\System32\conhost.exe` || task.Arguments != want || task.Logon != "InteractiveToken" || task.RunLevel != "LeastPrivilege" || task.Trigger != "true" {
		t.Errorf("task %+v: want conhost --headless running %q at logon, with the user's token, least privilege", task, want)
	}
	if got := strings.Join(p.enable[0].argv, " "); got != "schtasks /Create /TN reaper-test /XML "+p.files[0].path+" /F" || len(p.enable) != 1 {
		t.Errorf("enable: %s (%d commands; a test's task is not started)", got, len(p.enable))
	}
	if mine, err := (&Service{User: true}).plan("windows", exe); err != nil || strings.Join(mine.enable[len(mine.enable)-1].argv, " ") != "schtasks /Run /TN "+TaskName {
		t.Errorf("the user's task is not started at once: %+v, %v", mine, err)
	}
	if got := strings.Join(p.remove[len(p.remove)-1].argv, " "); got != "schtasks /Delete /TN reaper-test /F" || p.remove[len(p.remove)-1].optional {
		t.Errorf("remove: %s (optional %v)", got, p.remove[len(p.remove)-1].optional)
	}
	for _, s := range []*Service{{User: false}, {User: true, Timer: true}} {
		var usage *UsageError
		if _, err := s.plan("windows", exe); !errors.As(err, &usage) {
			t.Errorf("%+v on Windows: %v, want a usage error (not built there)", *s, err)
		}
	}
}

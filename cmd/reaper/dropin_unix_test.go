//go:build unix

// The drop-in's hook runs under /bin/sh, as systemd runs it.

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdDropInHook runs the shipped ExecStartPre= line the way systemd
// would hand it to the shell ($$ → $, %h → the home directory), with a
// stand-in reaper that exits with each status: 2 and 78 must stop the
// gateway, the others must not.
func TestSystemdDropInHook(t *testing.T) {
	b, err := os.ReadFile("../../packaging/hook/openclaw-gateway-reaper.conf")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStartPre="); ok {
			line = v
		}
	}
	if line == "" {
		t.Fatal("no ExecStartPre= line")
	}
	dir := t.TempDir()
	// What systemd does to the line: specifiers, then $$ → $ (a lone $VAR
	// would be systemd's own substitution — there must be none).
	line = strings.ReplaceAll(line, "%h", dir)
	if i := strings.Index(strings.ReplaceAll(line, "$$", ""), "$"); i >= 0 {
		t.Fatalf("a lone $ in the Exec line: systemd would substitute it: %s", line)
	}
	line = strings.ReplaceAll(line, "$$", "$")
	script, ok := strings.CutPrefix(line, "/bin/sh -c '")
	if !ok || !strings.HasSuffix(script, "'") {
		t.Fatalf("unexpected form: %s", line)
	}
	script = strings.TrimSuffix(script, "'")
	stub := filepath.Join(dir, "reaper")
	script = strings.ReplaceAll(script, "/usr/bin/reaper", stub)
	for code, want := range map[int]int{0: 0, 1: 0, 3: 0, 77: 0, 2: 2, 78: 78} {
		os.WriteFile(stub, []byte(fmt.Sprintf("#!/bin/sh\nexit %d\n", code)), 0o755)
		err := exec.Command("/bin/sh", "-c", script).Run()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("reaper exit %d: the hook exits %d, want %d", code, got, want)
		}
	}
}

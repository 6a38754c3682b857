package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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

package doctor

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// The records the timer's command line names: their size and age, and a
// metrics file the timer has stopped writing.
func TestRecordsCheck(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	log, prom := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "reaper.prom")
	argv := []string{"/usr/bin/reaper", "reap", "--audit-log", log, "--metrics", prom}
	running := audit.Check{Status: audit.CheckOK}

	if c := recordsCheck(nil, running, now); c.Status != audit.CheckInfo {
		t.Errorf("no command line: %+v", c)
	}
	c := recordsCheck(argv, running, now)
	if c.Status != audit.CheckWarn || !strings.Contains(c.Summary, "audit log not written yet") || !strings.Contains(c.Summary, "metrics not written yet") {
		t.Errorf("neither written: %+v", c)
	}
	os.WriteFile(log, []byte(strings.Repeat("x", 2048)), 0o644)
	os.WriteFile(prom, []byte("reaper_findings 0\n"), 0o644)
	c = recordsCheck(argv, running, now)
	if !strings.Contains(c.Summary, "audit log 2.0 KiB") || !strings.Contains(c.Summary, "metrics written") {
		t.Errorf("both written: %+v", c)
	}
	os.Chtimes(prom, now.Add(-10*time.Minute), now.Add(-10*time.Minute))
	c = recordsCheck(argv, running, now)
	if c.Status != audit.CheckWarn || !strings.Contains(strings.Join(c.Details, "\n"), "older than 5 minutes") {
		t.Errorf("stale metrics: %+v", c)
	}
	if c := recordsCheck(argv, audit.Check{Status: audit.CheckWarn}, now); strings.Contains(strings.Join(c.Details, "\n"), "older than 5 minutes") {
		t.Errorf("stale metrics with no timer running are not the timer's fault: %+v", c)
	}
}

// TestServiceBinaryCheck: a root service's binary that another user could
// replace fails, with the fix; a root-owned one in root's directories
// passes (the control).
func TestServiceBinaryCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a root service's unit and who can replace its binary are Unix's: reaper has no Windows service yet")
	}
	shared, err := os.MkdirTemp("", "reaper-doctor-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o777)
	exe := filepath.Join(shared, "reaper")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	if c := serviceBinaryCheck([]string{exe, "watch"}); c.Status != audit.CheckFail || !strings.Contains(c.Fix, "/usr/local/bin/reaper") {
		t.Errorf("a binary in a directory every user writes: %+v", c)
	}
	safe, _ := filepath.EvalSymlinks("/bin/sh")
	if why, err := platform.WhoCanReplace(safe); err != nil || why != "" {
		t.Skipf("no root-owned binary here to control with: %s %v", why, err)
	}
	if c := serviceBinaryCheck([]string{safe, "watch"}); c.Status != audit.CheckOK {
		t.Errorf("control: %s: %+v", safe, c)
	}
}

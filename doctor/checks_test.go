package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
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

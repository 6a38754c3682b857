package audit

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// The shipped alerting rules and Grafana dashboard query only metrics
// that reaper writes: a metric renamed here, or misspelt there, fails.
// (promtool test rules checks what the rules do, in CI.)
func TestMonitoringNamesMetrics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reaper.prom")
	rep := &Report{PTY: PTY{InUse: 3, Max: 4096}}
	if err := WriteMetrics(path, rep, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllSubmatch(text, -1) {
		written[string(m[1])] = true
	}
	if len(written) < 10 {
		t.Fatalf("only %d metrics written: %s", len(written), text)
	}
	for _, file := range []string{"../packaging/prometheus/reaper-alerts.yml", "../packaging/grafana/reaper-dashboard.json"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		used := regexp.MustCompile(`\breaper_[a-z_]+\b`).FindAllString(string(data), -1)
		if len(used) == 0 {
			t.Errorf("%s queries no reaper metric", file)
		}
		for _, name := range used {
			if !written[name] {
				t.Errorf("%s queries %s, which reaper does not write", file, name)
			}
		}
	}
}

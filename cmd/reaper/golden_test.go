package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/paths"
)

// The end-to-end test of the real binary against the fixture machine in
// testdata/proc; the output must equal testdata/golden (refresh with
// go test ./cmd/reaper -run Golden -update).
func TestGoldenScan(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	if runtime.GOOS != "linux" {
		skips.Skip(t, "--proc fixtures are Linux only")
	}
	tests := []struct {
		name   string
		golden string
		args   []string
	}{
		{"table, fixture policy", "scan-fixture.txt", []string{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml"}},
		{"table, --all", "scan-all.txt", []string{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml", "--all"}},
		{"json, --all", "scan-all.json", []string{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml", "--all", "-o", "json"}},
		{"json, fixture policy", "scan-fixture.json", []string{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml", "--output", "json"}},
		{"table, embedded default", "scan-default.txt", []string{"scan", "--proc", "../../testdata/proc"}},
		{"json, embedded default", "scan-default.json", []string{"scan", "--proc", "../../testdata/proc", "-o", "json"}},
		{"table, with a ledger", "scan-ledger.txt", []string{"scan", "--proc", "../../testdata/proc", "--ledger", "../../testdata/ledger/fixture.json"}},
		{"json, with a ledger", "scan-ledger.json", []string{"scan", "--proc", "../../testdata/proc", "--ledger", "../../testdata/ledger/fixture.json", "-o", "json"}},
		{"ledger show", "ledger-show.txt", []string{"ledger", "show", "--proc", "../../testdata/proc", "../../testdata/ledger/fixture.json"}},
		{"ledger show json", "ledger-show.json", []string{"ledger", "show", "--proc", "../../testdata/proc", "-o", "json", "../../testdata/ledger/fixture.json"}},
	}
	if _, err := os.Stat(paths.SystemPolicy); err == nil && os.Geteuid() == 0 {
		skips.Skipf(t, "%s exists: the embedded-default goldens would not apply", paths.SystemPolicy)
	}
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "LC_ALL=C.UTF-8"}
	tests = append(tests, struct {
		name   string
		golden string
		args   []string
	}{"table, C locale: ASCII trees", "scan-ascii.txt", []string{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml"}})
	for _, tt := range tests {
		env := env
		if tt.golden == "scan-ascii.txt" {
			env = []string{"XDG_CONFIG_HOME=" + env[0][len("XDG_CONFIG_HOME="):], "LC_ALL=C"}
		}
		t.Run(tt.name, func(t *testing.T) {
			compareGolden(t, tt.golden, clitest.RunReaper(t, env, tt.args...))
		})
	}
}

// compareGolden checks a run's output against testdata/golden/name, and
// writes it there with -update.
func compareGolden(t *testing.T, name string, r clitest.Result) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	got := normalize(r.Stdout)
	path := filepath.Join("..", "..", "testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update if the change is intended)\n--- got\n%s", path, got)
	}
	if filepath.Ext(name) == ".json" {
		var v map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatalf("stdout is not one JSON object: %v", err)
		}
	}
}

// reaper explain on the fixture machine: a member of a finding, a
// finding a [[protect]] rule refuses, a live owner's child, and a pid
// that is not there (66).
func TestGoldenExplain(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	if runtime.GOOS != "linux" {
		skips.Skip(t, "--proc fixtures are Linux only")
	}
	base := []string{"explain", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml"}
	env := []string{"LC_ALL=C.UTF-8"}
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"explain-member.txt", []string{"302"}},
		{"explain-member.json", []string{"302", "-o", "json"}},
		{"explain-protected.txt", []string{"961"}},
		{"explain-owned.txt", []string{"201"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			compareGolden(t, tt.golden, clitest.RunReaper(t, env, append(base, tt.args...)...))
		})
	}
	if r := clitest.RunReaper(t, env, append(base, "999")...); r.Code != audit.ExitError || !strings.Contains(r.Stderr, "no process 999") {
		t.Errorf("explain of a pid not there: exit %d, %q; want 1 (66 is for files)", r.Code, r.Stderr)
	}
	if r := clitest.RunReaper(t, env, append(base, "x1")...); r.Code != audit.ExitUsage {
		t.Errorf("explain x1: exit %d, want 2", r.Code)
	}
}

// reaper history over testdata/audit: the live log, a rotation and a
// gzipped one, a torn line and a line that is not JSON; filters by time,
// rule, user (by name and by uid) and outcome.
func TestGoldenHistory(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	log := "../../testdata/audit/audit.jsonl"
	env := []string{"TZ=UTC", "LC_ALL=C.UTF-8"}
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"history-all.txt", []string{"--since", "2026-01-01", "--signals"}},
		{"history-all.json", []string{"--since", "2026-01-01", "--signals", "-o", "json"}},
		{"history-alice-killed.txt", []string{"--since", "2026-11-21", "--user", "alice", "--outcome", "killed"}},
		{"history-uid-rule.txt", []string{"--since", "2026-11-21", "--until", "2026-11-24T08:00", "--user", "1002", "--rule", "agent-client-mcp"}},
		{"history-nothing.txt", []string{"--since", "2026-11-24T08:00", "--until", "2026-11-24T09:00"}},
		{"history-rows.txt", []string{"--since", "2026-01-01", "--signals", "--no-headers"}},
		{"history-color.txt", []string{"--since", "2026-01-01", "--signals", "--color", "always"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			compareGolden(t, tt.golden, clitest.RunReaper(t, env, append([]string{"history", "--audit-log", log}, tt.args...)...))
		})
	}
	// Its rows alone keep stdout for awk; what was skipped is on stderr.
	rows := clitest.RunReaper(t, env, "history", "--audit-log", log, "--since", "2026-01-01", "--no-headers")
	if !strings.Contains(rows.Stderr, "warning: 2 lines of the audit log were not records: skipped") || strings.Contains(rows.Stdout, "skipped") {
		t.Errorf("--no-headers: stderr %q; want the skipped lines said there, not in the rows:\n%s", rows.Stderr, rows.Stdout)
	}
	if r := clitest.RunReaper(t, env, "history", "--audit-log", log, "--color", "sometimes"); r.Code != audit.ExitUsage || !strings.Contains(r.Stderr, `--color "sometimes"`) {
		t.Errorf("a bad --color: exit %d, %q; want 2 and the value named", r.Code, r.Stderr)
	}
	r := clitest.RunReaper(t, env, "history", "--audit-log", log, "--since", "someday")
	if r.Code != audit.ExitUsage || !strings.Contains(r.Stderr, `--since "someday"`) {
		t.Errorf("a bad --since: exit %d, %q; want 2 and the value named", r.Code, r.Stderr)
	}
}

// normalize removes what changes from run to run, or from checkout to
// checkout: the time of the scan, and the uids of a fixture's processes
// (the owner of its directories, whoever checked the repository out).
// The tests set TZ=UTC, which Windows does not read: there the zone is
// the machine's (wine's, UTC, is named GMT).
func normalize(s string) string {
	s = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (UTC|GMT)`).ReplaceAllString(s, "TIME")
	return regexp.MustCompile(`"time": "[^"]*"`).ReplaceAllString(s, `"time": "TIME"`)
}

// The report is one model: its JSON holds all a table shows, so a table
// rebuilt from the JSON alone equals the table the same scan printed.
func TestTableFromJSON(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	if runtime.GOOS != "linux" {
		skips.Skip(t, "--proc fixtures are Linux only")
	}
	for _, args := range [][]string{
		{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml", "--all"},
		{"scan", "--proc", "../../testdata/proc", "--ledger", "../../testdata/ledger/fixture.json", "--policy", "../../testdata/policy/fixture.toml"},
	} {
		env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "LC_ALL=C.UTF-8"}
		table := clitest.RunReaper(t, env, args...)
		js := clitest.RunReaper(t, env, append(args, "-o", "json")...)
		if table.Code != 0 || js.Code != 0 {
			t.Fatalf("exit %d, %d: %s%s", table.Code, js.Code, table.Stderr, js.Stderr)
		}
		var rep audit.Report
		if err := json.Unmarshal([]byte(js.Stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) == 0 || len(rep.Findings[0].Members) == 0 {
			t.Fatalf("no findings or members in the JSON: %s", js.Stdout)
		}
		var rebuilt strings.Builder
		if err := rep.WriteTable(&rebuilt, audit.Style{}); err != nil {
			t.Fatal(err)
		}
		// The two runs are seconds apart at most: ages may differ by one.
		ages := regexp.MustCompile(`\b\d+[smhd]\d*[smh]?\b`)
		got, want := ages.ReplaceAllString(normalize(rebuilt.String()), "AGE"), ages.ReplaceAllString(normalize(table.Stdout), "AGE")
		if got != want {
			t.Errorf("%v: the table rebuilt from JSON differs\n--- rebuilt\n%s\n--- printed\n%s", args, got, want)
		}
	}
}

// The README's sample report is the golden's, not a copy that ages: each
// of its lines is a line of testdata/golden/scan-default.txt, in order (a
// line ending in " …" is a cut one, its start compared; "…" alone stands
// for what was left out; the header's time is the golden's TIME).
func TestReadmeSampleIsTheGolden(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("../../testdata/golden/scan-default.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	at := strings.Index(text, "From the fixture machine in `testdata/proc`")
	start := strings.Index(text[at:], "```\n")
	if at < 0 || start < 0 {
		t.Fatal("the README has no sample report after \"From the fixture machine\"")
	}
	sample := text[at+start+4:]
	sample = sample[:strings.Index(sample, "```")]
	stamp := regexp.MustCompile(` · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · `)
	lines := strings.Split(string(golden), "\n")
	next := 0
	for _, want := range strings.Split(strings.TrimRight(sample, "\n"), "\n") {
		if want == "…" {
			continue
		}
		want = stamp.ReplaceAllString(want, " · TIME · ")
		cut := strings.HasSuffix(want, " …")
		found := false
		for next < len(lines) && !found {
			l := lines[next]
			next++
			found = l == want || cut && strings.HasPrefix(l, strings.TrimSuffix(want, " …"))
		}
		if !found {
			t.Fatalf("README sample line %q is not in testdata/golden/scan-default.txt (after what came before it): update the README from the golden", want)
		}
	}
}

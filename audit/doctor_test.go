package audit

import (
	"strings"
	"testing"
)

// The table: status, name and summary on the first line, details and the
// fix below, everything within 80 columns, and the count.
func TestDiagnosisTable(t *testing.T) {
	d := &Diagnosis{Version: "1.2.3", Platform: "linux/amd64", UID: 0, User: "root", Checks: []Check{
		{Name: "pidfd", Status: CheckOK, Summary: "every signal goes through a pidfd"},
		{Name: "lock", Status: CheckFail, Summary: "/nonexistent/.cache/reaper/reaper.lock cannot be made: / is not writable (permission denied), so reap cannot take its lock",
			Fix: "pass --lock-file in a directory this user can write"},
		{Name: "state dirs", Status: CheckWarn, Summary: "1 of 2 state dirs could not be read",
			Details: []string{"openclaw /home/alice/.openclaw of alice (uid 1000): acpx/process-leases.json: permission denied"}},
	}}
	var b strings.Builder
	if err := d.WriteTable(&b, Style{}); err != nil {
		t.Fatal(err)
	}
	want := `reaper 1.2.3 (linux/amd64), running as root (uid 0)

ok    pidfd          every signal goes through a pidfd
fail  lock           /nonexistent/.cache/reaper/reaper.lock cannot be made: / is
                     not writable (permission denied), so reap cannot take its
                     lock
                     fix: pass --lock-file in a directory this user can write
warn  state dirs     1 of 2 state dirs could not be read
                     - openclaw /home/alice/.openclaw of alice (uid 1000):
                       acpx/process-leases.json: permission denied

3 checks: 1 ok, 1 warning, 1 failed
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("%d columns: %q", len([]rune(line)), line)
		}
	}
}

// A user's words in a check (a state dir's name) cannot write to the
// operator's terminal.
func TestDiagnosisEscapes(t *testing.T) {
	d := &Diagnosis{Checks: []Check{{Name: "state dirs", Status: CheckWarn, Summary: "x",
		Details: []string{"openclaw /home/eve/.openclaw\x1b[2J: read"}}}}
	var b strings.Builder
	d.WriteTable(&b, Style{})
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("an escape sequence reached the table: %q", b.String())
	}
}

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"a b c", 3, []string{"a b", "c"}},
		{"short /a/very/long/path/indeed end", 10, []string{"short", "/a/very/long/path/indeed", "end"}},
		{"été à côté", 6, []string{"été à", "côté"}},
	} {
		if got := Wrap(tt.text, tt.width); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}

// Issue 52, item 9: `doctor -q` shows only the checks that are not ok,
// and its count said "7 checks" of 13: the count is of every check,
// saying how many ok ones are not shown.
func TestDoctorQuietCountsEveryCheck(t *testing.T) {
	d := &Diagnosis{Checks: []Check{{Name: "a", Status: CheckWarn, Summary: "w"}, {Name: "b", Status: CheckFail, Summary: "f"}}, OKLeftOut: 5}
	var b strings.Builder
	if err := d.WriteTable(&b, Style{}); err != nil {
		t.Fatal(err)
	}
	if want := "7 checks: 5 ok, 1 warning, 1 failed (5 ok not shown)"; !strings.Contains(b.String(), want) {
		t.Errorf("got:\n%s\nwant %q", b.String(), want)
	}
}

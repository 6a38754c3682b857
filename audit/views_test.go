package audit

import (
	"encoding/json"
	"strings"
	"testing"
)

// The pty view's table says what its model says — the legend only when a
// holder is starred, the not-root caveat only when not root, one line per
// terminal with both ends — and the same table comes back from its JSON.
func TestPTYViewTable(t *testing.T) {
	v := &PTYView{SchemaVersion: 1, InUse: 2, Max: 4096, Dead: []int{5}, Unreadable: 1, PTYs: []PTYEntry{
		{PTS: 3, Masters: []PTYHolder{{PID: 10, Cmdline: "tmux"}}, Slaves: []PTYHolder{{PID: 11, Cmdline: "bash\nrm -rf /", InFinding: true}}},
		{PTS: 5, Dead: true, Why: "no master", Slaves: []PTYHolder{{PID: 20, Cmdline: "sleep 600"}}},
	}}
	var table strings.Builder
	if err := Write(&table, v, "table", Style{}); err != nil {
		t.Fatal(err)
	}
	got := table.String()
	for _, want := range []string{
		"PTYs: 2 in use of 4096 (kernel.pty.nr / kernel.pty.max); 1 dead",
		"/dev/pts/3  in use\n  master 10 tmux\n  slave  11* bash\\nrm -rf /\n",
		"/dev/pts/5  DEAD\n    no master\n  master —\n  slave  20 sleep 600\n",
		"* part of a finding of the policy",
		"not root: other users' fds were not read",
		"1 process's fds could not be read",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	var js strings.Builder
	if err := Write(&js, v, "json", Style{Color: true}); err != nil {
		t.Fatal(err)
	}
	var back PTYView
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil {
		t.Fatal(err)
	}
	var again strings.Builder
	back.WriteTable(&again, Style{})
	if again.String() != got {
		t.Errorf("the table from the JSON differs:\n%s\nwant\n%s", again.String(), got)
	}
	v.AsRoot, v.PTYs[0].Slaves[0].InFinding = true, false
	table.Reset()
	v.WriteTable(&table, Style{})
	if strings.Contains(table.String(), "part of a finding") || strings.Contains(table.String(), "not root") {
		t.Errorf("legend or caveat with nothing starred, as root:\n%s", table.String())
	}
}

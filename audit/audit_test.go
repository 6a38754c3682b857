package audit

import (
	"reflect"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"node server.js", "node server.js"},
		{"evil\nname", `evil\nname`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"tab\there", `tab\there`},
		{"ünïcode ok", "ünïcode ok"},
		{"c1 \u009b control", `c1 \u009b control`},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLastSiblings(t *testing.T) {
	// root ─┬─ a ─── a1
	//       └─ b ─┬─ b1
	//             └─ b2
	depths := []int{0, 1, 2, 1, 2, 2}
	ms := make([]scan.Member, len(depths))
	for i, d := range depths {
		ms[i] = scan.Member{Proc: &platform.Process{PID: i + 1}, Depth: d}
	}
	got := lastSiblings(ms)
	want := []bool{true, false, true, true, false, true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lastSiblings = %v, want %v", got, want)
	}
}

func TestHumanUnits(t *testing.T) {
	bytes := map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 50 << 20: "50.0 MiB", 3 << 30: "3.0 GiB"}
	for n, want := range bytes {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	ages := map[time.Duration]string{
		5 * time.Second: "5s", 65 * time.Second: "1m05s", 2*time.Hour + 3*time.Minute: "2h03m",
		50 * time.Hour: "2d02h",
	}
	for d, want := range ages {
		if got := humanAge(d); got != want {
			t.Errorf("humanAge(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestLabelsEscape(t *testing.T) {
	if got, want := labels("rule", `a"b\c`+"\n"), `{rule="a\"b\\c\n"}`; got != want {
		t.Errorf("labels = %s, want %s", got, want)
	}
}

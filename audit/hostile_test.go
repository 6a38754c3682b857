package audit

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orphanreaper/reaper/policy"
)

// hostile is what a user can put in any string reaper prints: their
// process's command line, a state dir's name, a session id, a ledger's
// owner name. A newline would start a forged line ("root's reaper killed
// …" in root's journal); ESC would reach the operator's terminal.
var hostile = hostileControls

// The hostile strings: controls, and bytes that are not UTF-8 alone — a
// lone 0x9B, the 8-bit CSI, is no rune at all, and a string with no
// control in it took another path through the escaping.
const (
	hostileControls = "x\nFORGED reaper reap: tree 1 killed\r\x1b[2J\x1b]0;t\a\u202eevil\x85\x9b2J\xff"
	hostileBytes    = "x FORGED \x9b2J\x9b31m red \xff\xfe"
)

// fill sets every exported string reachable from v to hostile, and gives
// every slice one element and every map one entry, so that each field any
// writer prints is a user's.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(hostile)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type().PkgPath() == "time" {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// checkOutput fails when out has a line that a user's string starts, or a
// control character or escape a user's string carries.
func checkOutput(t *testing.T, what, out string) {
	t.Helper()
	if !strings.Contains(out, "FORGED") {
		t.Errorf("%s: prints none of the hostile strings: the check would prove nothing\n%s", what, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " -│├└─*"), "FORGED") {
			t.Errorf("%s: a user's string starts a line: %q", what, line)
		}
		if i := strings.IndexFunc(line, func(r rune) bool { return r != '\t' && isControl(r) }); i >= 0 {
			t.Errorf("%s: a control character reaches the output raw: %q", what, line)
		}
		if !utf8.ValidString(line) {
			t.Errorf("%s: a byte that is not UTF-8 reaches the output raw: %q", what, line)
		}
	}
}

// TestNoUserStringForgesOutput: every writer of every view, with every
// string of its data a user's hostile string, prints no line that string
// starts and no control character or escape sequence — the table, --quiet
// (one journal entry per line under the units), the errors and warnings,
// and journald's MESSAGE. The check's control: the same strings raw do
// forge a line (so the check can fail).
func TestNoUserStringForgesOutput(t *testing.T) {
	for _, h := range []string{hostileControls, hostileBytes} {
		hostile = h
		noUserStringForgesOutput(t)
	}
	hostile = hostileControls
}

func noUserStringForgesOutput(t *testing.T) {
	var ctrl strings.Builder
	ctrl.WriteString("reaper reap: tree 7 killed: " + hostile + "\n")
	if strings.Count(ctrl.String(), "\nFORGED") == 0 && utf8.ValidString(hostile) {
		t.Fatal("the control does not forge a line")
	}
	var rep Report
	fill(reflect.ValueOf(&rep), 0)
	for _, outcome := range []string{"killed", "failed", "refused", hostile} {
		rep.Findings[0].Outcome = policy.Outcome(outcome)
		for _, st := range []Style{{}, {ASCII: true}, {NoHeaders: true}} {
			var b bytes.Buffer
			if err := rep.WriteTable(&b, st); err != nil {
				t.Fatal(err)
			}
			checkOutput(t, "scan/reap table, outcome "+outcome, b.String())
		}
		var q bytes.Buffer
		if err := rep.WriteQuiet(&q); err != nil {
			t.Fatal(err)
		}
		checkOutput(t, "--quiet, outcome "+outcome, q.String())
	}
	var rec Record
	fill(reflect.ValueOf(&rec), 0)
	var msgs strings.Builder
	for _, e := range journalEntries(&rep, []Record{rec}) {
		msgs.WriteString(e.msg + "\n")
	}
	checkOutput(t, "journald MESSAGE", msgs.String())
	for name, v := range map[string]Tabular{"explain": &Explanation{}, "history": &History{}, "ledger show": &LedgerView{}, "pty": &PTYView{}, "doctor": &Diagnosis{}} {
		fill(reflect.ValueOf(v), 0)
		var b bytes.Buffer
		if err := Write(&b, v, "table", Style{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkOutput(t, name, b.String())
	}
}

// A storm's journal record: its line escaped (a user's process title can
// hold a newline or an escape), its fields whole, and the end a notice.
func TestStormEntry(t *testing.T) {
	s := Storm{PID: 777, Comm: "x\nMESSAGE=forged\x1b[2J", Command: "node evil.js", UID: 1000, User: "ann", Rate: 120, Threshold: 30, Seen: "fork events"}
	e := stormEntry(s, false)
	if strings.ContainsAny(e.msg, "\n\x1b") || e.pri != priWarning || e.fields["MESSAGE_ID"] != MessageIDStorm ||
		e.fields["REAPER_PID"] != "777" || e.fields["REAPER_RATE"] != "120" || e.fields["REAPER_COMM"] != s.Comm {
		t.Errorf("start: %+v", e)
	}
	if over := stormEntry(s, true); over.pri != priNotice || over.fields["REAPER_EVENT"] != "fork-storm-over" || strings.ContainsAny(over.msg, "\n\x1b") {
		t.Errorf("end: %+v", over)
	}
}

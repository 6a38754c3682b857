package statedir

import (
	"strings"
	"testing"
)

// What a Judge is given must be what the same adapter's Decode made: a
// value of another adapter (or none) is an error naming the dir, never a
// zero Raw judged as if it were the dir's.
func TestJudgingIsTheSameAdaptersRead(t *testing.T) {
	b := []byte(`{"dir":"/home/a/.gemini","uid":1000,"servers":[{"name":"fs","command":"npx"}]}`)
	v := DecodeConfig(b, "/home/a/.gemini", 1000, "Gemini CLI")
	ev, problems, _ := JudgeConfig(v, "/home/a/.gemini", 1000, "Gemini CLI")
	if len(problems) != 0 || len(ev.Servers) != 1 || ev.Servers[0].UID != 1000 {
		t.Fatalf("control: servers %+v, problems %v; want npx spoken by uid 1000", ev.Servers, problems)
	}
	type other struct{ Head }
	for _, bad := range []any{nil, &Decoded[other]{}, (*Decoded[Config])(nil), "raw"} {
		ev, problems, _ := JudgeConfig(bad, "/home/a/.gemini", 1000, "Gemini CLI")
		if len(problems) != 1 || !strings.Contains(problems[0].Error(), "/home/a/.gemini") || len(ev.Servers) != 0 {
			t.Errorf("%T: evidence %+v, problems %v; want one problem naming the dir", bad, ev, problems)
		}
	}
	// Decoded as another uid's: the problem stops the judging.
	v = DecodeConfig(b, "/home/a/.gemini", 1001, "Gemini CLI")
	if ev, problems, _ := JudgeConfig(v, "/home/a/.gemini", 1001, "Gemini CLI"); len(problems) != 1 || len(ev.Servers) != 0 {
		t.Errorf("read as uid 1000, listed as 1001: evidence %+v, problems %v; want none and one", ev, problems)
	}
}

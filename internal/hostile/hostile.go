package hostile

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Secret is what every secret in Strings holds: no sink may write it.
const Secret = "BSECRET"

// Strings are the hostile strings, by what each tries.
var Strings = []struct{ Name, S string }{
	{"controls", "x\nFORGED reaper reap: tree 1 killed\r\x1b[2J\x1b]0;t\a\u202eevil\x85"},
	{"not UTF-8", "x FORGED \x9b2J\x9b31m red \xff\xfe"},
	{"64 KiB name", strings.Repeat("n", 64<<10)},
	{"secret in a URL", "npm exec mcp-remote https://mcp.internal.example/sse?token=BSECRET0001"},
	{"secret flag", "node server.js --api-key BSECRET0002 --port 1"},
	{"token shape", "env GH=ghp_BSECRET0003abcdefghijklmnop"},
	{"auth header", "curl -H 'Authorization: Bearer BSECRET0004'"},
	{"userinfo", "git clone https://bob:BSECRET0005@git.example/x"},
}

// Check fails t unless out, what sink wrote with a hostile string, holds
// no secret, is valid UTF-8 with no control character but newline and
// tab, and has no line longer than maxLine bytes.
func Check(t testing.TB, sink, out string, maxLine int) {
	t.Helper()
	if strings.Contains(out, Secret) {
		t.Errorf("%s: a secret leaves through it: %.300q", sink, out)
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8: %.300q", sink, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > maxLine {
			t.Errorf("%s: a line of %d bytes, want at most %d", sink, len(line), maxLine)
		}
		if i := strings.IndexFunc(line, control); i >= 0 {
			t.Errorf("%s: a control character reaches it raw: %.300q", sink, line)
		}
	}
}

// Control fails t when out, what a sink wrote with no rule applied,
// would pass Check: the check can fail.
func Control(t testing.TB, out string) {
	t.Helper()
	if !strings.Contains(out, Secret) && utf8.ValidString(out) && !strings.ContainsFunc(out, control) {
		t.Errorf("the control passes the check: it proves nothing: %.200q", out)
	}
}

func control(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

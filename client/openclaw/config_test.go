package openclaw

import (
	"errors"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
)

// Errors name the input line, whether the JSON5 reader or the JSON decoder
// finds them.
func TestJSON5ErrorLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"{\n  a: 1,\n  /* never closed\n}", 3},
		{"{\n  a: 'open\n}", 2},
		{"{\n  a: 1,\n  b 2\n}", 3},               // missing colon: the decoder's error
		{"{\n\n  a: 1\n  b: 2\n}", 4},             // missing comma
		{"{\n  a: 1,\n  b: 007,\n}", 3},           // leading zeros
		{"{\n  a: 1,\n  b: #\n}", 3},              // not a token
		{"{\n  a: 1,\n  b: [1, 2,\n  c: 3\n}", 4}, // unbalanced
	} {
		_, err := parseMCPServers("openclaw.json", []byte(tc.in))
		var e *ledger.Error
		if !errors.As(err, &e) || e.Line != tc.line {
			t.Errorf("%q: error %v, want line %d", tc.in, err, tc.line)
		}
	}
}

package statedir

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decodeJSON5(t *testing.T, in string) any {
	t.Helper()
	doc, err := ParseJSON5([]byte(in))
	if err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	var v any
	if _, err := doc.Unmarshal(&v); err != nil {
		t.Fatalf("%q → %s: %v", in, doc.out, err)
	}
	return v
}

func TestJSON5(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"// a comment\n{a: 1, /* inline */ b: [1, 2,],}\n", `{"a": 1, "b": [1, 2]}`},
		{`{'single': 'it\'s', "dq": "say \"hi\""}`, `{"single": "it's", "dq": "say \"hi\""}`},
		{`{$id: 1, _x2: true, n: null}`, `{"$id": 1, "_x2": true, "n": null}`},
		{`[0x1F, +3, .5, 5., -2.5e3, Infinity, -Infinity, NaN]`, `[31, 3, 0.5, 5.0, -2500, null, null, null]`},
		{"{s: 'tab\\tnew\\nline \\x41\\u00e9 conti\\\nnued'}", `{"s": "tab\tnew\nline Aé continued"}`},
		{"\ufeff{a: '/* not a comment */', b: '// nor this'}", `{"a": "/* not a comment */", "b": "// nor this"}`},
		{"{a: 1,\n // trailing comment\n}", `{"a": 1}`},
	} {
		var want any
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if got := decodeJSON5(t, tc.in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %v, want %v", tc.in, got, want)
		}
	}
}

// A JSON5 reading of valid JSON is that JSON: the reader adds, never changes.
func FuzzJSON5(f *testing.F) {
	f.Add([]byte(`{"a": [1, "x", {"b": null}], "c": -1.5e3}`))
	f.Add([]byte("// c\n{a: 'b', c: [0x10, .5,],}"))
	f.Add([]byte(`"\u00e9\n"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := ParseJSON5(b)
		var want any
		if json.Unmarshal(b, &want) != nil {
			if err == nil {
				var v any
				doc.Unmarshal(&v) // must not panic; may fail
			}
			return
		}
		if err != nil {
			t.Fatalf("valid JSON %q rejected: %v", b, err)
		}
		var got any
		if _, err := doc.Unmarshal(&got); err != nil {
			t.Fatalf("valid JSON %q became %q: %v", b, doc.out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("valid JSON %q read as %v, want %v", b, got, want)
		}
	})
}

package openclaw

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

func decodeJSON5(t *testing.T, in string) any {
	t.Helper()
	doc, err := json5ToJSON([]byte(in))
	if err != nil {
		t.Fatalf("%q: %v", in, err)
	}
	var v any
	if _, err := doc.unmarshal(&v); err != nil {
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

// A JSON5 reading of valid JSON is that JSON: the reader adds, never changes.
func FuzzJSON5(f *testing.F) {
	f.Add([]byte(`{"a": [1, "x", {"b": null}], "c": -1.5e3}`))
	f.Add([]byte("// c\n{a: 'b', c: [0x10, .5,],}"))
	f.Add([]byte(`"\u00e9\n"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		doc, err := json5ToJSON(b)
		var want any
		if json.Unmarshal(b, &want) != nil {
			if err == nil {
				var v any
				doc.unmarshal(&v) // must not panic; may fail
			}
			return
		}
		if err != nil {
			t.Fatalf("valid JSON %q rejected: %v", b, err)
		}
		var got any
		if _, err := doc.unmarshal(&got); err != nil {
			t.Fatalf("valid JSON %q became %q: %v", b, doc.out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("valid JSON %q read as %v, want %v", b, got, want)
		}
	})
}

const openclawConfig = `// ~/.openclaw/openclaw.json, as a person edits it
{
  gateway: { port: 18789, },
  mcp: {
    servers: {
      // bundle-MCP stdio servers
      context7: { command: 'npx', args: ['-y', '@upstash/context7-mcp'] },
      docs: { command: '/opt/tools/docs-helper', args: ['--stdio', '/srv/docs'], env: { TOKEN: 'x' } },
      remote: { url: 'https://mcp.example.test/mcp' },   // HTTP: no process
      node: { command: 'node' },
    },
  },
}
`

func TestReadOpenClawMCPServers(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadMCPServers(dir); got != nil || err != nil {
		t.Fatalf("no config: %v, %v", got, err)
	}
	file := filepath.Join(dir, "openclaw.json")
	if err := os.WriteFile(file, []byte(openclawConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMCPServers(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []MCPServer{
		{Server: scan.Server{Name: "context7", Command: "npx", Args: []string{"-y", "@upstash/context7-mcp"}, File: file}},
		{Server: scan.Server{Name: "docs", Command: "/opt/tools/docs-helper", Args: []string{"--stdio", "/srv/docs"}, File: file}},
		{Server: scan.Server{Name: "node", Command: "node", File: file}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("servers\n got %+v\nwant %+v", got, want)
	}
	os.WriteFile(file, []byte("{\n  mcp: { servers: { bad: { command: 7 } } }\n}\n"), 0o644)
	if _, err := ReadMCPServers(dir); err == nil || !strings.Contains(err.Error(), "mcp.servers.bad") {
		t.Errorf("wrong type: %v", err)
	}
	os.WriteFile(file, []byte("{\n  mcp: {\n    servers: 'x',\n  }\n}\n"), 0o644)
	if _, err := ReadMCPServers(dir); err == nil || !strings.HasPrefix(err.Error(), file+":3:") {
		t.Errorf("servers not an object: %v, want %s:3", err, file)
	}
}

package openclaw

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
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
	uid := uint32(os.Getuid()) // the config's owner: whose servers they are
	want := []MCPServer{
		{Server: scan.Server{Name: "context7", Command: "npx", Args: []string{"-y", "@upstash/context7-mcp"}, File: file, UID: uid}},
		{Server: scan.Server{Name: "docs", Command: "/opt/tools/docs-helper", Args: []string{"--stdio", "/srv/docs"}, File: file, UID: uid}},
		{Server: scan.Server{Name: "node", Command: "node", File: file, UID: uid}},
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

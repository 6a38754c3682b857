package continuecli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// continueDir is ~/.continue as a user writes it: a model, two stdio
// servers (one whose argv says nothing of MCP), one by URL.
func continueDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".continue")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, configFile), []byte(`name: local
version: 0.0.1
schema: v1
models:
  - name: m
    provider: openai
    model: m
    apiBase: http://127.0.0.1:1/v1
mcpServers:
  - name: quiet
    command: /opt/srv/quiet-helper
    args: ["--stdio"]
  - name: fs
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/w"]
  - name: remote
    type: streamable-http
    url: https://mcp.example/mcp
`), 0o600)
	return dir
}

func TestReadConfig(t *testing.T) {
	raw := Adapter.Read(continueDir(t))
	var got []string
	for _, s := range raw.Servers {
		got = append(got, s.Name+"="+s.Command+" "+strings.Join(s.Args, " "))
	}
	if strings.Join(got, ",") != "quiet=/opt/srv/quiet-helper --stdio,fs=npx -y @modelcontextprotocol/server-filesystem /w" || len(raw.ConfigProblems) > 0 {
		t.Errorf("servers %q, problems %q", got, raw.ConfigProblems)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, configFile), []byte("name: x\nmcpServers:\n  - name: [unclosed\n    command: `sh -c evil`\n"), 0o600)
	raw = Adapter.Read(dir)
	if len(raw.Servers) != 0 || len(raw.ConfigProblems) != 1 || !strings.Contains(raw.ConfigProblems[0], "config.yaml:") || strings.Contains(raw.ConfigProblems[0], "evil") {
		t.Errorf("a broken config: servers %v, problems %q; want one problem with a line and none of the file's text", raw.Servers, raw.ConfigProblems)
	}
}

// A server cn's config declares, orphaned, whose process group's leader
// (cn, run from a shell: a job's group in the shell's session) is gone, is
// owner-dead, cn's — whatever its argv says. The controls: the leader
// alive; the group its session's (setsid: the leader not shown to be cn);
// the server leading its own group; a command the config does not declare.
func TestServerByGroup(t *testing.T) {
	const uid = 1000
	quiet := clienttest.Proc(820, 1, 810, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, nil)
	mcp := clienttest.Proc(821, 1, 810, uid, []string{"npm", "exec", "@modelcontextprotocol/server-filesystem", "/w"}, nil)
	cn := clienttest.Proc(810, 400, 810, uid, []string{"node", "/usr/local/bin/cn", "-p", "hi"}, nil)
	cn.SID = 400
	setsid := quiet
	setsid.SID = 810
	own := clienttest.Proc(820, 1, 820, uid, []string{"/opt/srv/quiet-helper", "--stdio"}, nil)
	stranger := clienttest.Proc(820, 1, 810, uid, []string{"/opt/srv/other", "--stdio"}, nil)
	for _, tc := range []struct {
		name        string
		procs       []platform.Process
		pid         int
		owned, dead bool
	}{
		{"its leader gone", []platform.Process{quiet}, 820, true, true},
		{"its leader gone, an argv that says mcp", []platform.Process{mcp}, 821, true, true},
		{"control: its leader, cn, alive", []platform.Process{quiet, cn}, 820, true, false},
		{"control: the group its session's", []platform.Process{setsid}, 820, true, false},
		{"control: it leads its own group", []platform.Process{own}, 820, true, false},
		{"control: not a server of the config", []platform.Process{stranger}, 820, false, false},
	} {
		f := clienttest.Finding(clienttest.Scan(t, Client, continueDir(t), uid, tc.procs...), tc.pid)
		if f == nil {
			t.Errorf("%s: no finding", tc.name)
			continue
		}
		if (f.Owner == OwnerName) != tc.owned || f.Has(scan.OwnerDead) != tc.dead || tc.owned && f.Kind != scan.KindMCP {
			t.Errorf("%s: owner %q, kind %s, reasons %v; want cn's %v, owner-dead %v, kind mcp\n%q", tc.name, f.Owner, f.Kind, f.Reasons, tc.owned, tc.dead, f.Evidence)
		}
	}
}

// Another user's config speaks for none of this user's servers.
func TestOtherUsersConfig(t *testing.T) {
	quiet := clienttest.Proc(820, 1, 810, 1001, []string{"/opt/srv/quiet-helper", "--stdio"}, nil)
	f := clienttest.Finding(clienttest.Scan(t, Client, continueDir(t), 1000, quiet), 820)
	if f == nil || f.Owner != "" || f.Has(scan.OwnerDead) {
		t.Errorf("uid 1001's server by uid 1000's config: %+v, want no one's", f)
	}
}

// A live cn whose terminal is gone is a session, not a finding: node
// running the cn script is cn's own process (Info.Script).
func TestLiveCNIsSession(t *testing.T) {
	for _, argv := range [][]string{{"node", "/usr/local/bin/cn", "-p", "hi"}, {"node", "/h/.npm/_npx/1/node_modules/@continuedev/cli/dist/cn.js"}} {
		live := clienttest.Proc(810, 1, 810, 1000, argv, nil)
		live.SID = 400
		r := clienttest.Scan(t, Client, continueDir(t), 1000, live)
		if _, ok := r.LiveClient(810); !ok || clienttest.Finding(r, 810) != nil {
			t.Errorf("%q, alive, reparented: live %v, finding %+v; want a session", argv, ok, clienttest.Finding(r, 810))
		}
	}
	other := clienttest.Proc(810, 1, 810, 1000, []string{"node", "/srv/app/acn.js"}, nil)
	other.SID = 400
	if r := clienttest.Scan(t, Client, continueDir(t), 1000, other); clienttest.Finding(r, 810) == nil {
		t.Errorf("control: another node program is a finding still")
	}
}

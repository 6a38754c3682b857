package client_test

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// fake is an adapter whose read is a config, and whose Judge claims, with
// the wrong speaker, a ledger, a tie and a server.
type fake struct{ read statedir.Config }

func (fake) Info() client.Info                                     { return client.Info{Name: "fake", Title: "Fake"} }
func (fake) HomeDirs(string, int) []string                         { return nil }
func (fake) OwnDirs(func(string) string) []string                  { return nil }
func (fake) NamedDir(func(string) (string, bool)) (string, string) { return "", "" }
func (fake) IsStateDir(string) bool                                { return false }
func (f fake) Read(dir string) *statedir.Config                    { r := f.read; r.Dir = dir; return &r }
func (fake) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	ev := scan.Evidence{Servers: c.Servers,
		Ledgers: []*ledger.Ledger{{Source: c.Dir, Speaker: 4242}},
		Ties:    []scan.Tie{{Env: "X", Value: "y", Speaker: 4242}}}
	return ev, c.Errors(), c.Warnings()
}

var _ client.Adapter[statedir.Config] = fake{}

// The port erases an adapter's read to JSON and back, losing nothing; the
// judgement's every claim is spoken by the uid the read was decoded as,
// whatever the adapter set; a read of another dir or another uid is not
// judged, its problems and warnings said instead.
func TestPort(t *testing.T) {
	c := client.New[statedir.Config](fake{read: statedir.Config{Head: statedir.Head{UID: 1000},
		Servers: []scan.Server{{Name: "fs", Command: "npx", Args: []string{"-y", "fs"}, UID: 7}}, ConfigProblems: []string{"bad"}}})
	wire := c.Read("/home/a/.fake")
	if strings.ContainsRune(string(wire), '\n') {
		t.Fatalf("the wire is more than one line: %q", wire)
	}
	ev, problems, warnings := c.Decode(wire, "/home/a/.fake", 1000).Judge(nil)
	if len(problems) != 0 || len(ev.Servers) != 1 || ev.Servers[0].Command != "npx" || len(ev.Servers[0].Args) != 2 {
		t.Fatalf("round trip: servers %+v, problems %v", ev.Servers, problems)
	}
	if ev.Servers[0].UID != 1000 || ev.Ledgers[0].Speaker != 1000 || ev.Ties[0].Speaker != 1000 {
		t.Errorf("speakers: server %d, ledger %d, tie %d; want the read's uid 1000 for each", ev.Servers[0].UID, ev.Ledgers[0].Speaker, ev.Ties[0].Speaker)
	}
	if len(warnings) != 1 || warnings[0] != "bad" {
		t.Errorf("warnings %q", warnings)
	}
	for _, tt := range []struct {
		name, dir string
		uid       uint32
		want      string
	}{
		{"another uid", "/home/a/.fake", 1001, "owned by uid 1000 when read, uid 1001 when listed"},
		{"another dir", "/home/b/.fake", 1000, `the reader returned "/home/a/.fake"`},
	} {
		ev, problems, warnings := c.Decode(wire, tt.dir, tt.uid).Judge(nil)
		if len(problems) != 1 || !strings.Contains(problems[0].Error(), tt.want) || len(ev.Servers)+len(ev.Ledgers) != 0 || len(warnings) != 1 {
			t.Errorf("%s: evidence %+v, problems %v, warnings %q; want one problem (%s), the read's warnings, no evidence", tt.name, ev, problems, warnings, tt.want)
		}
	}
	if _, problems, _ := c.Decode([]byte("garbage"), "/home/a/.fake", 1000).Judge(nil); len(problems) != 1 {
		t.Errorf("garbage: problems %v, want one", problems)
	}
}

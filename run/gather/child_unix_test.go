//go:build unix

// The reader children are Unix's (a child set to the user's uid): on
// Windows reaper reads its own user's state in-process.

package gather

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What a reader child prints is split into each dir's read as printed,
// and anything else — another protocol, another count, another dir, a
// line short or over — is that uid's error, never a read.
func TestDecodeChildOutput(t *testing.T) {
	requireNoRace(t)
	g := &group{uid: 1001, dirs: []Dir{
		{Path: "/home/a/.openclaw", Client: "openclaw", UID: 1001},
		{Path: "/home/a/.claude", Client: "claude-code", UID: 1001},
	}}
	// This test binary is a reader child too (TestMain); ChildMain run
	// here would set its limits on the tests themselves.
	out, err := exec.Command(os.Args[0], ChildCommand, "--", "openclaw:/nonexistent/.openclaw", "claude-code:/nonexistent/.claude").Output()
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	printed := strings.ReplaceAll(string(out), "/nonexistent/", "/home/a/")
	reads, err := decode(g, []byte(printed))
	if err != nil || len(reads) != 2 {
		t.Fatalf("decode of a reader's own output: %d reads, %v", len(reads), err)
	}
	for k, r := range reads {
		if bytes.ContainsRune(r, '\n') || !bytes.Contains(r, []byte(`"dir":"`+g.dirs[k].Path+`"`)) {
			t.Errorf("read %d is %.80q, want %s's read alone", k, r, g.dirs[k].Path)
		}
	}
	lines := strings.SplitAfter(printed, "\n")
	for _, c := range []struct{ name, out string }{
		{"another protocol", strings.Replace(printed, `"protocol":2`, `"protocol":1`, 1)},
		{"another count", strings.Replace(printed, `"states":2`, `"states":3`, 1)},
		{"another dir", strings.Replace(printed, `"dir":"/home/a/.claude"}`, `"dir":"/root/.claude"}`, 1)},
		{"another client", strings.Replace(printed, `{"client":"claude-code"`, `{"client":"openclaw"`, 1)},
		{"a line short", strings.Join(lines[:len(lines)-2], "")},
		{"no last newline", strings.TrimSuffix(printed, "\n")},
		{"a line over", printed + "{}\n"},
		{"no header", strings.Join(lines[1:], "")},
		{"nothing", ""},
	} {
		if reads, err := decode(g, []byte(c.out)); err == nil {
			t.Errorf("%s: decoded %d reads, want an error", c.name, len(reads))
		}
	}
}

// A dir read by change is named to a reader child with its records'
// names, whatever bytes the names hold, and the child reads those alone:
// a session file made after the names were given is not read, one named
// is. Control: the same dir named whole reads both.
func TestChildReadsByChange(t *testing.T) {
	requireNoRace(t)
	d := Dir{Path: "/x/.claude", Client: "claude-code", byChange: true, changed: "sessions/1.json\nsessions/a:b c.json"}
	name, dir, changed, err := parseChildArg(childArg(d))
	if err != nil || name != d.Client || dir != d.Path || strings.Join(changed, "\n") != d.changed {
		t.Fatalf("round trip: %q %q %q %v", name, dir, changed, err)
	}
	if _, _, whole, _ := parseChildArg(childArg(Dir{Path: "/x/.claude", Client: "claude-code"})); whole != nil {
		t.Errorf("a dir read whole came back with names %q", whole)
	}
	home := t.TempDir()
	cfg := home + "/.claude"
	os.MkdirAll(cfg+"/sessions", 0o700)
	for _, pid := range []string{"4100001", "4100002"} {
		os.WriteFile(cfg+"/sessions/"+pid+".json", []byte(`{"pid":`+pid+`,"sessionId":"s-`+pid+`","startedAt":1,"procStart":"9"}`), 0o600)
	}
	for _, c := range []struct {
		d    Dir
		want []string
	}{
		{Dir{Path: cfg, Client: "claude-code", byChange: true, changed: "sessions/4100002.json"}, []string{"s-4100002"}},
		{Dir{Path: cfg, Client: "claude-code"}, []string{"s-4100001", "s-4100002"}},
	} {
		out, err := exec.Command(os.Args[0], ChildCommand, "--", childArg(c.d)).Output()
		if err != nil {
			t.Fatalf("reader: %v", err)
		}
		for _, id := range []string{"s-4100001", "s-4100002"} {
			if got, want := strings.Contains(string(out), `"sessionId":"`+id+`"`), strings.Contains(strings.Join(c.want, " "), id); got != want {
				t.Errorf("by change %v: %s read %v, want %v", c.d.byChange, id, got, want)
			}
		}
	}
}

// /etc/passwd, which only Unix has.
func TestPasswd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	os.WriteFile(path, []byte("root:x:0:0:root:/root:/bin/bash\nbin:x:2:2:bin:/:/usr/sbin/nologin\n"+
		"alice:x:1001:100::/home/alice/:/bin/sh\nbad:x:x:1::/home/bad:/bin/sh\nshort:x:3\nrel:x:4:4::home/rel:/bin/sh\n"), 0o644)
	got := passwd(path)
	want := []account{{0, 0, "/root", "root"}, {1001, 100, "/home/alice", "alice"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("accounts %+v, want %+v", got, want)
	}
	if gidOf(got, 1001) != 100 || gidOf(got, 4242) != 65534 {
		t.Errorf("gidOf: %d, %d", gidOf(got, 1001), gidOf(got, 4242))
	}
}

package policy

import (
	"strings"
	"testing"
)

// declaredPolicy declares a client reaper ships no adapter for: its own
// processes by their command line, and the variable it puts on what it
// spawns naming its pid.
const declaredPolicy = `version = 1
[defaults]
min_age = "0s"

[[client]]
name = "cursor-agent"
command = '(^|/)cursor-agent( |$)'
pid_env = ["CURSOR_AGENT_PID"]

[[rule]]
name = "dead-client"
when = ["owner-dead"]
owner = ["cursor-agent"]
action = "terminate"
`

// A [[client]]'s pid mark proves it gone as an adapter's does: its server
// naming a pid no process has is owner-dead and planned, by a rule that
// names the client as an owner; its command line gives its own processes
// kind acp. The control: the named process lives, started before the
// server: its leak, not owner-dead, and no rule takes it.
func TestDeclaredClient(t *testing.T) {
	pol, err := Parse("declared.toml", []byte(declaredPolicy), testClients)
	if err != nil {
		t.Fatal(err)
	}
	if names := pol.EnvNames(); !strings.Contains(strings.Join(names, " "), "CURSOR_AGENT_PID") {
		t.Errorf("EnvNames %v: the client's pid variable is not looked up", names)
	}
	pl, _ := planOf(pol, ModeReap, 0,
		proc(300, 1, []string{"node", "/srv/tools/server.js"}, []string{"CURSOR_AGENT_PID=290"}, "/", 1000),
		proc(295, 200, []string{"/usr/local/bin/cursor-agent"}, nil, "/", 500),
		proc(310, 1, []string{"node", "/srv/tools/server.js"}, []string{"CURSOR_AGENT_PID=295"}, "/", 1000),
		proc(200, 1, []string{"-bash"}, nil, "/", 100))
	check(t, pl, want{300, "dead-client", Terminate, Planned, ""})
	f := pl.Items[0].Finding
	if f.Owner != "cursor-agent" || !strings.Contains(strings.Join(f.Evidence, "; "), "CURSOR_AGENT_PID=290: cursor-agent pid 290 is gone") {
		t.Errorf("owner %q, evidence %q", f.Owner, f.Evidence)
	}
	var live bool
	for _, u := range pl.UnmatchedFindings {
		if u.Root.PID == 310 && u.Owner == "cursor-agent" && !u.Has("owner-dead") {
			live = true
		}
	}
	if !live {
		t.Error("control: the live client's server is not its leak, unmatched")
	}
}

// Every mistake in a [[client]] is reported at its line, at once.
func TestDeclaredClientErrors(t *testing.T) {
	_, err := Parse("bad.toml", []byte(`version = 1
[[client]]
name = "opencode"
command = 'x'

[[client]]
name = "nocmd"

[[client]]
name = "badenv"
command = 'y'
pid_env = ["NOT A NAME"]
kind = "daemon"
`), testClients)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`bad.toml:3: client "opencode" is already an owner's or a shipped client's name`,
		`bad.toml:6: [[client]] "nocmd" needs a command`,
		`bad.toml:12: pid_env "NOT A NAME" is not an environment variable name`,
		`bad.toml:13: kind "daemon": want acp, mcp, exec or other`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
}

// A [[client]]'s session files are read as declared: the glob's dir and
// pattern, the keys, the variable. Every mistake in them is reported at
// its line, at once.
func TestDeclaredSessionFiles(t *testing.T) {
	pol, err := Parse("ok.toml", []byte(`version = 1
[[client]]
name = "agentx"
command = '(^|/)agentx( |$)'
session_files = "~/.agentx/state/sessions/*.json"
session_pid = "@name"
session_env = "AGENTX_SESSION"
session_id = "id"
`), testClients)
	if err != nil {
		t.Fatal(err)
	}
	want := SessionFiles{Dir: ".agentx/state/sessions", Pattern: "*.json", PIDFromName: true, Env: "AGENTX_SESSION", ID: "id"}
	if s := pol.Clients[0].Sessions; s == nil || *s != want {
		t.Errorf("sessions %+v, want %+v", s, want)
	}
	if names := strings.Join(pol.EnvNames(), " "); !strings.Contains(names, "AGENTX_SESSION") {
		t.Errorf("EnvNames %s: the session variable is not looked up", names)
	}
	_, err = Parse("bad.toml", []byte(`version = 1
[[client]]
name = "a:b"
command = 'x'
session_files = "/etc/agentx/*.json"
session_env = "X"
session_id = "id"

[[client]]
name = "up"
command = 'x'
session_files = "~/../other/*.json"
session_pid = "a b"
session_env = "X"
session_id = "id"

[[client]]
name = "wild"
command = 'x'
session_files = "~/.w*/sessions/*.json"
session_started = "when?"
session_env = "X"
session_id = "id"

[[client]]
name = "half"
command = 'x'
session_files = "~/.half/s/[.json"
session_env = "NOT A NAME"

[[client]]
name = "keys only"
command = 'x'
session_env = "X"
session_id = "id"
`), testClients)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`bad.toml:3: client name "a:b": at most 64 bytes, without ':' or '/'`,
		`bad.toml:5: session_files "/etc/agentx/*.json": want a glob under the user's home, beginning with ~/`,
		`bad.toml:12: session_files "~/../other/*.json": want the files in a directory below the home`,
		`bad.toml:13: session_pid "a b": want a key of the file's top-level object`,
		`bad.toml:20: session_files "~/.w*/sessions/*.json": wildcards go in the last element only`,
		`bad.toml:21: session_started "when?": want a key`,
		`bad.toml:28: session_files "~/.half/s/[.json": bad pattern "[.json": syntax error in pattern`,
		`bad.toml:29: session_env "NOT A NAME" is not an environment variable name`,
		`bad.toml:25: session files need session_env and session_id`,
		`bad.toml:31: session_* keys need session_files`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
}

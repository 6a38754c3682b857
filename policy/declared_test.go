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

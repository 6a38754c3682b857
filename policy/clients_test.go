package policy

import "github.com/orphanreaper/reaper/scan"

// testClients are what these tests tell the policy of the agent clients,
// written out (policy imports no client): the owner names of OpenClaw's
// evidence and OpenCode's, and OpenCode's leader mark — its children carry
// OPENCODE_PID, the pid of the opencode that leads their process group.
// The shipped clients with the shipped policies are tested in client/all.
var testClients = Clients{
	Owners: []string{"openclaw-gateway", "codex-app-server", "opencode"},
	Marks:  scan.Marks{Leaders: []scan.LeaderMark{{Env: "OPENCODE_PID", Owner: "opencode", PIDEnv: true}}},
}

package openclaw

import (
	"regexp"
	"strings"
)

// The environment markers OpenClaw puts on the processes it spawns
// (2026.9.6: exec children carry OPENCLAW_SHELL=exec, OPENCLAW_CLI=1 and
// the gateway's OPENCLAW_STATE_DIR; OPENCLAW_GATEWAY_SERVICE_PID only in
// service mode; MCP servers get a scrubbed environment with none of them).
const (
	EnvShell      = "OPENCLAW_SHELL"
	EnvStateDir   = "OPENCLAW_STATE_DIR"
	EnvServicePID = "OPENCLAW_GATEWAY_SERVICE_PID"
)

// gatewayComm is the gateway's process title as the kernel keeps it in
// comm (TASK_COMM_LEN 16: "openclaw-gateway" cut to 15 characters on
// Linux; macOS keeps 16): free to read for every process, unlike argv.
const gatewayComm = "openclaw-gatewa"

// IsGatewayComm reports whether a process's comm is the gateway's title.
func IsGatewayComm(comm string) bool { return strings.HasPrefix(comm, gatewayComm) }

// EnvNames are the markers reaper looks up itself, whatever the policy says.
var EnvNames = []string{EnvShell, EnvStateDir, EnvServicePID}

// supervisor matches OpenClaw's own supervisor processes (2026.9:
// dist/process/spawn-broker/worker.js, a child of the gateway in its own
// session; …/supervisor/service-child-relay.js under it; and
// …/service-child-group-anchor.js, which leads the group of the command it
// runs). Each stdio MCP server, and in service mode each exec, runs under a
// relay and an anchor.
var supervisor = regexp.MustCompile(`/process/(spawn-broker/worker|supervisor/service-child-(relay|group-anchor))\.js( |$)`)

// SupervisorRole names the role of one of OpenClaw's supervisor processes
// from its command line, or "" when it is not one.
func SupervisorRole(cmd string) string {
	m := supervisor.FindStringSubmatch(cmd)
	switch {
	case m == nil:
		return ""
	case m[2] == "relay":
		return "OpenClaw service-child relay"
	case m[2] == "group-anchor":
		return "OpenClaw group anchor"
	}
	return "OpenClaw spawn broker"
}

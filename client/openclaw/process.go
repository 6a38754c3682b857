package openclaw

import (
	"strings"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
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

// supervisors are OpenClaw's own supervisor processes (2026.9:
// dist/process/spawn-broker/worker.js, a child of the gateway in its own
// session; …/supervisor/service-child-relay.js under it; and
// …/service-child-group-anchor.js, which leads the group of the command it
// runs). Each stdio MCP server, and in service mode each exec, runs under a
// relay and an anchor. Each kills what it tracks within about 5 s of
// losing its gateway.
var supervisors = []scan.SupervisorMark{
	{Cmdline: scan.MustPattern(`/process/spawn-broker/worker\.js( |$)`), Role: "OpenClaw spawn broker", Note: supervisorNote},
	{Cmdline: scan.MustPattern(`/process/supervisor/service-child-relay\.js( |$)`), Role: "OpenClaw service-child relay", Note: supervisorNote},
	{Cmdline: scan.MustPattern(`/process/supervisor/service-child-group-anchor\.js( |$)`), Role: "OpenClaw group anchor", Note: supervisorNote},
}

const supervisorNote = "OpenClaw kills what it tracks within about 5 s of losing its gateway"

// SupervisorRole names the role of one of OpenClaw's supervisor processes
// from its command line, or "" when it is not one.
func SupervisorRole(cmd string) string {
	for _, m := range supervisors {
		if m.Cmdline.MatchString(cmd) {
			return m.Role
		}
	}
	return ""
}

// marks are OpenClaw's conventions as scan applies them: OPENCLAW_SHELL
// says what an exec child is (acp, acp-client, exec); its ACP wrapper and
// lease flag name ACP adapters (extensions/acpx:
// <state>/acpx/*-acp-wrapper.mjs with the lease flags), and so does its
// acpx CLI; its supervisors.
var marks = scan.Marks{
	Env: []scan.EnvMark{
		{Env: EnvShell, Value: "acp", Kind: ledger.KindACP},
		{Env: EnvShell, Value: "acp-client", Kind: ledger.KindACP},
		{Env: EnvShell, Value: "exec", Kind: ledger.KindExec},
	},
	Commands: []scan.CommandMark{
		{Cmdline: scan.MustPattern(`-acp-wrapper\.mjs|--openclaw-acpx-lease-id|/acpx/dist/|(^|/)acpx( |$)`), Kind: ledger.KindACP},
	},
	Supervisors: supervisors,
}

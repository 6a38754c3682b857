package all

import (
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// fixtures are each listed client's state as the client writes it: a new
// client of the list without one fails TestConformance.
var fixtures = map[string]clienttest.Fixture{
	"openclaw": {Dir: ".openclaw", Files: map[string]string{
		".openclaw/gateway.1a2b3c4d.lock": `{"pid": 4242, "createdAt": "2026-11-26T06:00:00Z", "configPath": "/h/.openclaw/openclaw.json", "startTime": 720000}`,
		".openclaw/gateway-instance-id":   "gw-1\n",
		".openclaw/acpx/process-leases.json": `{"version": 1, "leases": [{"leaseId": "L1", "gatewayInstanceId": "gw-1", "sessionKey": "agent:codex:acp:L1",
			"wrapperRoot": "/h/.openclaw/acpx", "wrapperPath": "/h/.openclaw/acpx/codex-acp-wrapper.mjs", "rootPid": 5001,
			"commandHash": "abc", "startedAt": 1795672800000, "state": "open"}]}`,
		".openclaw/openclaw.json": `{
  // JSON5, as OpenClaw writes it
  mcp: {servers: {fs: {command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}},
}`,
	}},
	"claude-code": {Dir: ".claude", Files: map[string]string{
		".claude/sessions/4242.json": `{"pid": 4242, "sessionId": "0b5e3a9c-1111-4000-8000-000000000001", "cwd": "/w", "startedAt": 1795672800000, "procStart": "720000", "kind": "interactive"}`,
		".claude.json":               `{"mcpServers": {"stubborn": {"type": "stdio", "command": "/opt/srv/stubborn", "args": ["--quiet"]}}}`,
	}},
	"codex": {Dir: ".codex", Files: map[string]string{
		".codex/app-server-daemon/daemon.pid": `{"pid": 4242, "processIdentity": {"bootId": "boot", "startTicks": 720000}}`,
		".codex/config.toml":                  "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs-server\"]\n",
	}},
	"gemini-cli": {Dir: ".gemini", Files: map[string]string{
		".gemini/settings.json": `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs-server"]}}}`,
	}},
	"opencode": {Dir: ".config/opencode", Files: map[string]string{
		".config/opencode/opencode.json": `{"mcp": {"fs": {"type": "local", "command": ["npx", "-y", "fs-server"]}}}`,
	}},
	"qwen-code": {Dir: ".qwen", Files: map[string]string{
		".qwen/settings.json": `{"security": {"auth": {"selectedType": "openai"}}, "mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs-server"]}}}`,
	}},
	"copilot-cli": {Dir: ".copilot", Files: map[string]string{
		".copilot/mcp-config.json": `{"mcpServers": {"fs": {"type": "local", "command": "npx", "args": ["-y", "fs-server"], "tools": ["*"]}}}`,
		".copilot/session-state/b8c4d4ba-2cb0-4c84-9115-1160c0f4d985/inuse.11605.lock": "11605\n",
	}},
	"kilo": {Dir: ".config/kilo", Files: map[string]string{
		".config/kilo/kilo.json": `{"autoupdate": false, "mcp": {"fs": {"type": "local", "command": ["npx", "-y", "fs-server"]}}}`,
	}},
	"cline": {Dir: ".cline", Files: map[string]string{
		".cline/data/locks/hub/production.json":        `{"hubId": "hub_1", "pid": 4242, "startedAt": "2026-11-26T06:00:00Z", "port": 25463}`,
		".cline/data/settings/cline_mcp_settings.json": `{"mcpServers": {"fs": {"transport": {"type": "stdio", "command": "npx", "args": ["-y", "fs-server"]}}}}`,
	}},
	"pi": {Dir: ".pi/agent", Files: map[string]string{
		".pi/agent/settings.json": `{"defaultProvider": "local", "defaultModel": "m"}`,
		".pi/agent/sessions/--w--/2026-12-02T02-00-27-103Z_01a2347b-52de-76d8-8ff6-dd9dcc84134d.jsonl": `{"type":"session","version":3,"id":"01a2347b-52de-76d8-8ff6-dd9dcc84134d","cwd":"/w"}` + "\n",
	}},
	"continue-cli": {Dir: ".continue", Files: map[string]string{
		".continue/config.yaml": "name: local\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: fs\n    command: npx\n    args: [\"-y\", \"fs-server\"]\n",
	}},
	"antigravity": {Dir: ".gemini/antigravity", Files: map[string]string{
		".gemini/antigravity/mcp_config.json": `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs-server"]}, "web": {"serverUrl": "https://mcp.example/mcp"}}}`,
	}},
}

// The client seam's contract (clienttest.Conformance), for every client of
// the list, through the Set cmd hands down.
func TestConformance(t *testing.T) {
	for _, c := range Clients.All() {
		name := c.Info().Name
		t.Run(name, func(t *testing.T) {
			fx, ok := fixtures[name]
			if !ok {
				t.Fatalf("client %s has no fixture here: add the state it writes to fixtures", name)
			}
			clienttest.Conformance(t, c, fx)
		})
	}
}

// Package cline is Cline's adapter (the cline CLI, 3.x). `cline -i` runs
// its MCP servers itself, in its process group, with
// CLINE_CONNECTOR_CLI_LAUNCH on them (a leader mark: cline leads the
// group when run from a shell), and starts a hub daemon that sessions
// share: `cline --cline-hub-daemon …`, setsid, its output on a log file,
// left running when the cline that started it exits, reused by the next.
// The hub writes ~/.cline/data/locks/hub/<name>.json {pid, startedAt, …}:
// a hub whose record verifies is owned, never a finding.
// ~/.cline/data/settings/cline_mcp_settings.json names the MCP servers.
package cline

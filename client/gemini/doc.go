// Package gemini is Gemini CLI's adapter on the client seam.
//
// Gemini CLI (0.61) records no pid. It relaunches itself (node → node
// --max-old-space-size=… with GEMINI_CLI_NO_RELAUNCH=true and an IPC
// channel to the outer node) and gives what it spawns GEMINI_CLI=1; all of
// it keeps the outer node's process group. So an orphan is tied to its
// client by that group: when the group's leader — the outer node — is
// gone, the client is (scan.LeaderMark). Its MCP servers are declared in
// <home>/.gemini/settings.json (JSON with comments) under mcpServers;
// GEMINI_CLI_HOME moves the home.
package gemini

// Package opencode is OpenCode's adapter on the client seam.
//
// OpenCode (1.18) records no pid on disk. What it spawns carries
// OPENCODE=1 and OPENCODE_PID=<its pid>, and keeps its process group, so
// an orphan is tied to it by that group: when the group's leader is gone,
// OpenCode is (scan.LeaderMark). Its MCP servers are declared in
// ~/.config/opencode/opencode.json (or .jsonc; OPENCODE_CONFIG_DIR or
// XDG_CONFIG_HOME move it) under mcp: {NAME: {type: "local", command:
// [argv…]}}.
package opencode

// Package copilot is GitHub Copilot CLI's adapter (@github/copilot). Its
// npm loader (node) runs the native copilot binary, which in interactive
// sessions puts its own pid on what it spawns as COPILOT_LOADER_PID (in
// -p mode, 1.0.102, it puts none: the stdin peer proves those servers
// abandoned). ~/.copilot/mcp-config.json names
// its MCP servers ("type": "local" for a command). Copilot keeps a server's
// pipes while it uses the server, even once the server's npm exec wrapper
// is gone: the stdin peer (scan) tells that server in use.
package copilot

// Package antigravity is the adapter of Google's Antigravity (the editor,
// and its agent CLI, agy), from its documented records: it is not on the
// npm registry this project installs clients from, and its source is not
// published, so nothing here was run against the real client. Its MCP
// servers are declared in ~/.gemini/antigravity/mcp_config.json
// ({"mcpServers": {NAME: {command, args, env}}}, Claude Code's format;
// global only, no project file); the adapter reads them as the file's
// owner, so that a server it spawned, orphaned, is of kind mcp whatever
// its argv says, and the stdin peer and the process groups prove the rest
// as for any client. No pid or session record of it is read.
package antigravity

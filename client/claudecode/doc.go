// Package claudecode is Claude Code's adapter on the client seam.
//
// Claude Code (2.1.x) registers each running session in
// <config>/sessions/<pid>.json — pid, sessionId, startedAt (ms),
// procStart (field 22 of /proc/PID/stat on Linux; `ps -o lstart=` in UTC
// on macOS), kind, entrypoint — and
// deletes the file at every clean end; a SIGKILL leaves it behind. <config>
// is CLAUDE_CONFIG_DIR, else ~/.claude. Its MCP servers and Bash-tool shells
// carry CLAUDECODE=1 and CLAUDE_CODE_SESSION_ID, and keep its process
// group. Servers are declared in the global config (~/.claude.json, or
// $CLAUDE_CONFIG_DIR/.claude.json): mcpServers, and projects[dir].mcpServers.
//
// A session file whose pid lives with the same start time is a live
// session: the claude process is owned (a detached `claude -p` is never a
// finding). A session file whose claude is gone ties what carries its
// session id to it: owner-dead, with the file and the pid as proof.
package claudecode

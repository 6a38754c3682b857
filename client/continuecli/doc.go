// Package continuecli is the adapter of Continue's CLI, cn
// (@continuedev/cli). cn is a node script that keeps node's title (comm
// "node", its command line `node …/cn` or `…/@continuedev/cli/dist/cn.js`).
// It spawns the stdio MCP servers of ~/.continue/config.yaml
// (CONTINUE_GLOBAL_DIR moves it; YAML: mcpServers: [{name, command,
// args}]) as its own children, in its own process group, with no
// variable of its own on them, and leaves them when it is killed — and,
// a server that ignores its stdin's end, when it exits. Its session files
// (~/.continue/sessions/UUID.json) hold the conversation and no pid. The
// proof is the group: a server its config declares, orphaned, whose group
// leader is gone and whose group is not its session's, was left by a cn
// that is gone (scan.Server.GroupOwner).
package continuecli

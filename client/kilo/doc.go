// Package kilo is Kilo's adapter (@kilocode/cli, a fork of OpenCode). A
// node wrapper starts the native .kilo and forwards signals to it; .kilo
// puts its own pid on what it spawns as KILO_PID (and KILO=1, OPENCODE=1,
// but no OPENCODE_PID, so OpenCode's adapter does not apply). The wrapper
// leads the process group, so the group says nothing of .kilo: the pid in
// KILO_PID does. ~/.config/kilo/kilo.json, in OpenCode's format, names its
// local MCP servers.
package kilo

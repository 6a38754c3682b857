// Package codex is Codex CLI's adapter on the client seam.
//
// Codex (0.169) runs a managed app-server daemon meant to outlive the TUI
// (`codex app-server --managed-daemon`, setsid), shared by the sessions
// that attach to it, and records it in
// <CODEX_HOME>/app-server-daemon/daemon.pid: pid, processStartTime (ps
// lstart), and processIdentity (Linux: boot id and start ticks; read from
// codex-rs/app-server-daemon/src/backend/pid_start.rs and the 0.169
// binary). Its updater is daemon-updater.pid beside it. A daemon whose
// record verifies is an owner, never a finding. Its MCP servers are
// sessions of their own, with a scrubbed environment whose only mark is a
// PATH entry under <CODEX_HOME>/packages/app-server-daemon/: that entry
// ties them to the daemon the record names, owner-dead once it is gone.
// A standalone install (0.148; 0.171 still attaches to its daemon)
// records the daemon as app-server-daemon/app-server.pid, {pid,
// processStartTime} with no identity, its servers' PATH entry under
// <CODEX_HOME>/packages/standalone/: read alike, each record tying its own
// layout's package root.
// The native TUI, started by the npm wrapper with CODEX_MANAGED_BY_NPM=1,
// keeps the wrapper's process group: orphaned by a SIGKILL of the wrapper,
// it is tied to its client by that group. Servers are declared in
// <CODEX_HOME>/config.toml under [mcp_servers.NAME].
//
// What reaper cannot tell: whether a live daemon is idle. Sessions attach
// to it over a socket, and no file records them; a daemon whose record
// verifies is spared whether or not a TUI is attached.
package codex

// Package openclaw is reaper's adapter for the OpenClaw gateway: it finds
// OpenClaw's state dirs (docs/openclaw.md), reads what they say about processes —
// gateway locks of every generation (the state dir, state/, the per-uid
// lock dir inside the state dir that 2026.9 uses, and /tmp/openclaw-<uid>),
// ACP process leases (JSON, and the SQLite keyed store), the codex
// app-server registry, the stdio MCP servers of openclaw.json (JSON5) —
// and turns it into ledgers (package ledger) and evidence the scan folds
// in: the gateway a lock names, the MCP servers a config names.
//
// A user's state dir is read as that user's: below the dir, through no
// symbolic link, only files the dir's owner owns, each bounded in size and
// never blocking (platform.ReadBeneath); errors never quote a file.
// openclaw reads, never writes, and never signals. Another gateway is an
// adapter of its own beside it (CONTRIBUTING.md, "Adding a client").
package openclaw

// Package sqlitestore reads a client's SQLite store the way a root reaper
// may: through descriptors opened beneath the state dir as its owner's
// files, with SQLite's read-only VFS, no lock taken, nothing written, the
// connection's limits set before its first statement, and each read
// bounded in time (Query). OpenClaw's state store and Codex's log store are
// read through it.
package sqlitestore

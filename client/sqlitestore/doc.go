// Package sqlitestore reads a client's SQLite store the way a root reaper
// may: through descriptors opened beneath the state dir as its owner's
// files, by reaper's own reader of the SQLite file format — no engine
// linked, no statement of the file's ever run, no lock taken, nothing
// written — each read bounded in pages, row size and time (Query).
// OpenClaw's state store and Codex's log store are read through it.
package sqlitestore

// Package client is the seam between reaper and the agent clients whose
// leftovers it finds: each client is one adapter package, listed once in
// All. An adapter says where its client keeps state, reads one state dir
// (as the dir's owner, in a reader child, when reaper is root), and judges
// what it read into evidence scan applies the same way for every client:
// ledgers of runs with their owners, ties from markers to owners, the MCP
// servers its configs declare, its kinds and supervisors, and advice.
// Nothing outside an adapter and this list knows a client by name (a
// layout test holds it).
package client

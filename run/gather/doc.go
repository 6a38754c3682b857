// Package gather reads the evidence a scan folds in besides the process
// table: the ledger files the command line and the policy name, and the
// agent clients' state dirs it discovers — in users' homes, in reaper's own
// environment, and in the environments of live owners and of the survivors
// of dead ones — each client's through its adapter (package client), by
// the same steps for every client.
//
// Every state dir is read as its owner's word. As root, a user's state is
// read in a child of reaper's own binary that runs as that user, bounds
// itself with resource limits before it reads a byte, and prints plain
// data (what the dir's client's Read returns) on stdout; the parent reads a capped amount of it
// within a deadline and judges it as the word of the uid it ran the child
// as. A child that fails, is killed or prints garbage is doubt for its uid
// only. The children of a run share one budget (budget.go): in turns, a
// share per user (their subordinate ids included), a deadline per uid and
// one for the run; a uid left out is its own doubt. Root never parses what
// a user wrote, and no user's files or ids can make the run slower or
// larger than its bounds.
//
// gather reads, never writes and never signals.
package gather

// Package client is the port between reaper and the agent clients whose
// leftovers it finds. A client is one package below it (client/openclaw,
// client/claudecode, …) implementing Adapter[R] over its own read R — where
// the client keeps state, its read of one state dir (as the dir's owner, in
// a reader child when reaper is root), and its judgement of that read into
// evidence scan applies the same way for every client: ledgers of runs with
// their owners, ties from markers to owners, the MCP servers its configs
// declare, its kinds and supervisors, and advice. New erases an adapter to
// a Client once, to JSON, with Decode checking every read is its dir's and
// its reader's uid's and Judge making every claim that uid's word.
//
// client/all lists the adapters, one line each, and only cmd imports it:
// everything below receives a Set. Nothing outside an adapter and the list
// knows a client by name (the layout test at the module's root holds it);
// clienttest.Conformance is the contract every listed client passes.
package client

// Package ledger reads and writes supervisor run ledgers (format v1,
// schema.json beside this file): one JSON document per owner process
// saying who the owner is, which sessions it has, and which runs
// (processes) it started, each with the process's start identity. The
// agent clients' adapters (client/...) read their own state into the same
// model.
//
// Everything a ledger says is a claim: a pid proves nothing until the live
// process's start identity matches, which is the scan's job. Reading fails
// closed: a ledger that does not parse is an error, never an empty ledger.
// ledger never looks at the process table and never signals; a supervisor
// can import it to write its ledger, and links nothing else (no SQLite).
package ledger

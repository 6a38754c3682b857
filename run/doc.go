// Package run is one run of reaper, start to finish, in the order the
// data flows: the lock, the deadline, the process table, the clients'
// state (run/gather, read as each state dir's owner), the scan, the plan,
// the re-read that spares what became owned, the report, the execution
// and the record it leaves (audit log, journal, metrics). cmd/reaper maps
// flags to a Config and errors to exit codes, and prints; everything
// between is here, and tested without building the binary.
//
// run never prints to stdout and never decides an exit status: it returns
// the report and the outcomes.
package run

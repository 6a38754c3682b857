// Package run is one run of reaper, start to finish, in the order the
// data flows. A pass (Scan) is its phases in one function: the process
// table, the evidence (run/gather, each state dir read as its owner, and
// called by run — never by scan), attribution (scan), the findings'
// details and each finding's rule (policy.MatchAll), who writes to the
// matched stdin (the one read after the table), and the decision
// (policy.Decide); Table.Decide is the one place a plan's options are
// made. The Pass is the value every verb reads: scan reports it
// (Pass.Report), ps, explain, evidence, pty and top are its views
// (run/view), ledger show is Ledgers, doctor scans through it, and Reap
// takes the lock, makes a pass, re-reads what became owned, reports and
// executes, and returns what it did with the pass it acted on, open; its
// caller records it (Reaped.Record) and closes it — a watch (run/watch)
// after it has re-armed from the pass and read its live figures. The
// decision reads a frozen table (platform.Snapshot.Freeze).
//
// cmd/reaper maps flags to a Config (NewConfig: every verb that scans is
// bounded) and errors to exit codes (audit's), and prints;
// everything between is here, and tested without building the binary.
// run never prints to stdout and never decides an exit status: it returns
// the report and the outcomes.
package run

// Package scan turns a process-table snapshot into findings: process trees
// whose root lost its real parent (reparented to init or a subreaper) and is
// not inside a live owner's tree, each with the reasons and the evidence for
// them.
//
// scan is pure: it does no I/O of its own. The details it needs (command
// lines, environments, cgroups) come through the snapshot, which reads them
// only for the few processes scan asks about. scan never decides what to do
// with a finding; that is the policy's job.
package scan

// Package doctor checks what reaper needs of a host and how the host runs
// it — the process table, pidfds, cgroup v2, privileges, the policy in
// force, the clients' state dirs, what a reap would do now, the lock, the
// timer or launchd job and its last run, the records, the journal — each
// ok, warn or fail, with the facts and the fix (audit.Diagnosis). It
// scans as scan does and never sends a signal; it asks the service
// manager through platform's unit queries alone.
package doctor

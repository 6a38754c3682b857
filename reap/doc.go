// Package reap carries out a plan: for each finding the policy decided to
// terminate or kill, it proves each process is still the one scanned,
// stops the tree, rescans until no new member appears, sends SIGTERM and
// SIGCONT, waits the grace period, SIGKILLs what remains and confirms every
// process is gone (docs/safety.md). Every signal goes through platform's one
// signal seam, through a pidfd where the kernel has them.
//
// reap never decides what to act on — the plan does — and never prints; it
// reports an outcome per finding and an event per signal.
package reap

// Package platform reads the process table: snapshots of it, process
// details (command line, environment, cgroup) on demand, the identity that
// later proves a pid still names the process that was scanned, and files
// read without blocking (beneath a user's dir, as that user's). With its
// packages it is the only code that talks to the operating system:
// platform/kill (the one signal seam: pidfds, identity re-proof, cgroup
// kill, confinement), platform/host (what the host is and how it runs
// reaper: systemd, launchd, journald, capabilities, PID namespaces, lock
// holders) and platform/child (the bounded reader child).
//
// On Linux it reads procfs with raw openat(2) relative to one open /proc
// directory, one read(2) per file, so a full-table snapshot costs about three
// syscalls per process. Other platforms return an error wrapping
// errors.ErrUnsupported; a missing platform is never a silent no-op.
//
// The OS-neutral types and the snapshot's accessors are in the files
// without a build tag; seam.go declares what each operating system
// implements. To add one, implement it in files named for it
// (proc_GOOS.go, …); until then the fallbacks answer — each named
// TOPIC_fallback.go, its build tag saying which systems it covers.
//
// platform never decides whether a process is an orphan and never prints.
package platform

// Package platform is the only package that talks to the operating system:
// it takes snapshots of the process table, reads process details (command
// line, environment, cgroup) on demand, and reports the identity that later
// proves a pid still names the process that was scanned.
//
// On Linux it reads procfs with raw openat(2) relative to one open /proc
// directory, one read(2) per file, so a full-table snapshot costs about three
// syscalls per process. Other platforms return an error wrapping
// errors.ErrUnsupported; a missing platform is never a silent no-op.
//
// The OS-neutral types and the snapshot's accessors are in the files
// without a build tag; seam.go lists what each operating system
// implements. To add one, implement that list in files named for it
// (proc_GOOS.go, signal_GOOS.go, …); until then unsupported.go answers.
//
// platform never decides whether a process is an orphan and never prints.
package platform

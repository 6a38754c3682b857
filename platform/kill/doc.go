// Package kill is the one signal seam (docs/safety.md): every signal
// reaper sends goes through a Handle this package opened and proved — on
// Linux a pidfd (pidfd_open(2)) whose process's start time is read again
// after it is opened, on macOS the start time, uid and argv re-checked
// right before kill(2) — and a Guard that refuses pid 1 and below, the
// reaper and its ancestors, and the plan's deny list at every signal. It
// also confines a dying tree in a cgroup of its own and kills it there as
// a unit (cgroup.kill), or kills a cgroup a finding owns whole.
//
// It holds nothing else: no table, no service manager, no system log. A
// platform without it returns errors wrapping errors.ErrUnsupported; the
// kill path is never a silent no-op.
package kill

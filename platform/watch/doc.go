// Package watch tells when a process exits, without polling: on Linux a
// pidfd (pidfd_open(2), 5.3+) per watched process in one epoll set — a
// pidfd becomes readable when its process exits, and the kernel reparents
// the process's children before it wakes the pollers (exit_notify →
// forget_original_parent), so the next read of /proc already shows the
// orphans. On macOS a kqueue EVFILT_PROC NOTE_EXIT knote per watched
// process (kqueue(2)); whether XNU reparents the children before the knote
// fires is not checked here, and the caller waits Settle (a tenth of a
// second there, none on Linux) after a hint before it looks. On Windows
// a handle per watched process, each waited on by the system's thread
// pool (RegisterWaitForSingleObject), and a directory's changes by
// ReadDirectoryChangesW on one I/O completion port; Windows reparents
// nothing, so a dead owner's children show as its leftovers at once.
// Elsewhere New returns an error wrapping errors.ErrUnsupported,
// and the caller polls instead. It never signals: an exit is a hint that
// a pass is due, never an action.
package watch

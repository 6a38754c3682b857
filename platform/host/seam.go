package host

import (
	"context"
	"time"
)

// The seam: what each operating system implements, declared once here
// with its doc, in lowercase in the files named for the OS.

// BecomeSubreaper makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER, prctl(2)): an orphaned descendant is reparented
// to it rather than to init, so it can reap what a command it ran left.
func BecomeSubreaper() error { return becomeSubreaper() }

// DrainZombies reaps every child of this process that has exited, and
// returns how many: what an init reaps once its command is gone.
func DrainZombies() int { return drainZombies() }

// EndNamespace ends every other process of this PID namespace — what is
// left when its init's command and reap are done — as a container
// runtime would, but graced: SIGTERM to all (kill(-1) from a namespace's
// PID 1 reaches exactly the namespace's other processes, never its own or
// another namespace's), then, for up to grace, their exits reaped as they
// come, then SIGKILL to what is left, reaped. It is for PID 1 alone and
// refuses otherwise. It returns how many processes were reaped and
// whether some needed the SIGKILL.
func EndNamespace(grace time.Duration) (reaped int, killed bool, err error) {
	return endNamespace(grace)
}

// HostPIDNamespace reports whether this process sees the host's process
// table: its PID namespace is the initial one. Inside another (a
// container, `unshare --pid`), processes outside it are not in /proc — the
// holder of the terminal one types in, for one — so "no process holds it"
// proves nothing. Unknown (an unreadable /proc/self/ns/pid) is false.
func HostPIDNamespace() bool { return hostPIDNamespace() }

// JournalEnabled reports whether journald is listening on this host (its
// native socket exists). go-systemd's journal package speaks the native
// protocol over that socket without cgo.
func JournalEnabled() bool { return journalEnabled() }

// JournalSend writes one structured record to journald. Field names are
// upper-case letters, digits and underscores (systemd.journal-fields(7)).
func JournalSend(message string, priority int, fields map[string]string) error {
	return journalSend(message, priority, fields)
}

// RunCommand runs argv as this process's child, in its process group and
// on its terminal, passes on the signals sent to this process alone, and
// returns the command's exit status (128+N when signal N ended it): what
// `reaper run` wraps. It is the one place besides the service manager's
// tool that reaper starts a program, and the program is the user's.
// started, when set, is told the command's pid once it runs; it returns
// at once.
func RunCommand(argv []string, started func(pid int)) (int, error) { return runCommand(argv, started) }

// RunInit runs argv as this process's child and, until it exits, reaps
// every other child of this process the moment it exits — what a
// subreaper or a PID namespace's init adopts — so that no zombie outlives
// a SIGCHLD. It passes Relayed signals on to the command (its group with
// Group), and returns the command's status: its exit code, 128+N when
// signal N ended it.
//
// A child's exit is looked at before it is taken (waitid with WNOWAIT):
// the children this process starts for itself meanwhile (StartOwn, a
// reader child of the watch inside) are left to their own waiters, and
// the command is started with the reaping held off, so that its exit is
// never taken for an adopted child's. No tick: SIGCHLD is never lost
// (a pending one stays pending until it is taken, signal(7)), and each
// one reaps every exited child. When RunInit returns, the caller's own
// children are its own again; DrainZombies reaps what was adopted and
// exited since.
func RunInit(argv []string, opts Init, started func(pid int)) (int, error) {
	return runInit(argv, opts, started)
}

// RunTool runs name from /usr/bin or /bin with args, for at most five
// seconds, and returns its standard output: systemctl and launchctl, for
// doctor and `reaper service`. It is never called by scan, reap or watch.
func RunTool(ctx context.Context, name string, args ...string) (string, error) {
	return runTool(ctx, name, args...)
}

// SystemdBooted reports whether systemd is this host's init (sd_booted(3):
// /run/systemd/system is a directory).
func SystemdBooted() bool { return systemdBooted() }

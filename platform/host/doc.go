// Package host answers what the host is and how it runs reaper, for
// doctor, the lock and the journal: whether systemd booted it and a unit's
// properties (systemctl show; launchctl print on macOS), journald, root's
// effective capabilities, whether this is the host's PID namespace, and
// which process holds a lock file. It is the only code that starts a
// program: the service manager's own tool, and the user's command that
// reaper run wraps (RunCommand), to which alone it passes on the signals
// sent to reaper run. It sends no other signal.
package host

package watch

// The seam: what each operating system implements, declared once here
// with its doc, in lowercase in the files named for the OS.

// DirsMechanism says how Dirs watches here, and its limit.
func DirsMechanism() string { return dirsMechanism() }

// ExitsMechanism says how Exits watches here.
func ExitsMechanism() string { return exitsMechanism() }

// New starts watching nothing; Set says what. It fails where pidfds or
// epoll are not to be had (an old kernel, a seccomp filter), or the
// system's thread-pool waits (Windows): the caller polls then, and says
// so.
func New() (*Exits, error) { return newWatch() }

// NewDirs starts watching no directory; Set says which. It fails where
// inotify is not to be had (a seccomp filter, fs.inotify.max_user_instances
// reached), or an I/O completion port (Windows): the caller's backstop
// covers the dirs then, and it says so.
func NewDirs() (*Dirs, error) { return newDirs() }

// Close stops watching and closes every descriptor and the kqueue.
func (d *Dirs) Close() error { return d.closeOS() }

// Len is how many directories are watched.
func (d *Dirs) Len() int { return d.len() }

// Set makes dirs the watched set, at most MaxDirs of them: a watch is
// removed for each dir no longer named and added for each new one. It
// returns how many could not be watched (gone, not a directory, past
// MaxDirs or the kernel's limit).
func (d *Dirs) Set(dirs []Dir) int { return d.set(dirs) }

// Close stops watching and closes every pidfd (every handle, Windows).
func (e *Exits) Close() error { return e.closeOS() }

// Len is how many processes are watched.
func (e *Exits) Len() int { return e.len() }

// Set makes targets the watched set: a pidfd is closed for each target
// no longer named and opened for each new one, whose start is checked
// after the open (the pidfd pins the process; the start proves it is the
// one named). A target already gone is reported on C at once: its exit
// may have come between the scan and the open. It returns how many could
// not be watched for another reason.
func (e *Exits) Set(targets []Target) int { return e.setOS(targets) }

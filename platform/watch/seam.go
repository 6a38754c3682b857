package watch

// The seam: what each operating system implements, declared once here
// with its doc, in lowercase in the files named for the OS.

// DirsMechanism says how Dirs watches here, and its limit.
func DirsMechanism() string { return dirsMechanism() }

// New starts watching nothing; Set says what. It fails where pidfds or
// epoll are not to be had (an old kernel, a seccomp filter): the caller
// polls then, and says so.
func New() (*Exits, error) { return newWatch() }

// NewDirs starts watching no directory; Set says which. It fails where
// inotify is not to be had (a seccomp filter, fs.inotify.max_user_instances
// reached): the caller's backstop covers the dirs then, and it says so.
func NewDirs() (*Dirs, error) { return newDirs() }

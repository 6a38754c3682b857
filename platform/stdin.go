package platform

// Stdin is what the kernel says of a process's standard input, when it is a
// pipe or a socket: whether anyone can still write to it. An MCP server
// speaks to its client over stdio; one whose stdin no process can write to
// any more can never be spoken to again, whatever its parent, and one whose
// stdin a live process outside its tree can still write to is that
// process's, whatever its parent.
type Stdin struct {
	// Kind is "pipe" or "socket"; "" for anything else (a terminal,
	// /dev/null, a file): no claim either way.
	Kind string
	// Inode is the pipe's or socket's inode, as /proc/PID/fd shows it.
	Inode uint64
	// Asked: the kernel was asked, on a duplicate of the process's fd 0
	// (pidfd_getfd(2), then poll(2)); without it (no ptrace access, an
	// older kernel) only the link was read, and Closed says nothing.
	Asked bool
	// Closed: no process can write to it any more — poll reports POLLHUP
	// on a pipe no writer holds, and POLLRDHUP on a socket whose other end
	// was shut for writing or closed. A kernel fact: it counts every
	// writer, in every namespace.
	Closed bool
}

// Writer is a process that holds a way to write to another's stdin: the
// write end of its pipe, or the other end of its socket.
type Writer struct {
	PID int
	FD  int
}

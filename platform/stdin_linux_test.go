package platform

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// stdinOf starts sleep with stdin, takes a table, and reads the child's
// stdin and who can write to it among this test process.
func stdinOf(t *testing.T, stdin *os.File) (child *Process, snap *Snapshot) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Stdin = stdin
	startExeced(t, cmd)
	s, err := ReadSnapshot(DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p := s.Get(cmd.Process.Pid)
	if p == nil {
		t.Fatalf("pid %d is not in the table", cmd.Process.Pid)
	}
	return p, s
}

func writersIn(t *testing.T, s *Snapshot, st Stdin) []Writer {
	t.Helper()
	self := s.Get(os.Getpid())
	if self == nil {
		t.Fatal("this test is not in its own table")
	}
	w, _ := s.StdinWriters([]Stdin{st}, []*Process{self}, nil)
	return w[st.Inode]
}

// A pipe: while this test holds its write end, the child's stdin is open
// and this test is named as its writer; once the write end is closed, the
// kernel says no one can write to it. The read end this test also holds
// is not a writer.
func TestStdinPipe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pidfd_getfd needs ptrace attach access to the child; Yama may refuse it to a user: run as root (CI does)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, s := stdinOf(t, r)
	st, err := s.ReadStdin(p)
	if err != nil || st.Kind != "pipe" || !st.Asked || st.Closed {
		t.Fatalf("write end held: %+v, %v; want an open pipe, asked", st, err)
	}
	ws := writersIn(t, s, st)
	if len(ws) != 1 || ws[0].FD != int(w.Fd()) {
		t.Errorf("writers %+v, want this test's fd %d alone (its read end %d is no writer)", ws, w.Fd(), r.Fd())
	}
	w.Close()
	if st, _ := s.ReadStdin(p); !st.Closed || !st.Asked {
		t.Errorf("write end closed: %+v, want closed", st)
	}
	if ws := writersIn(t, s, st); len(ws) != 0 {
		t.Errorf("write end closed: writers %+v", ws)
	}
}

// A socketpair, as Node gives a child's stdio: the other end's inode comes
// from sock_diag (asked by StdinWriters), and this test, which holds it, is
// the writer. Shut for
// writing (a client's stdin.end()), the child's stdin is closed though the
// other end is still open.
func TestStdinSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pidfd_getfd needs ptrace attach access to the child; Yama may refuse it to a user: run as root (CI does)")
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
	defer mine.Close()
	p, s := stdinOf(t, theirs)
	theirs.Close()
	st, err := s.ReadStdin(p)
	if err != nil || st.Kind != "socket" || !st.Asked || st.Closed {
		t.Fatalf("other end held: %+v, %v; want an open socket", st, err)
	}
	if ws := writersIn(t, s, st); len(ws) != 1 || ws[0].FD != int(mine.Fd()) {
		t.Errorf("writers %+v, want this test's fd %d", ws, mine.Fd())
	}
	if err := syscall.Shutdown(int(mine.Fd()), syscall.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.ReadStdin(p); !st.Closed {
		t.Errorf("other end shut for writing: %+v, want closed", st)
	}
}

// The control: a socket whose other end is closed reads closed, and one
// of /dev/null makes no claim.
func TestStdinClosedAndNone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pidfd_getfd needs ptrace attach access to the child; Yama may refuse it to a user: run as root (CI does)")
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
	p, s := stdinOf(t, theirs)
	theirs.Close()
	mine.Close()
	if st, _ := s.ReadStdin(p); st.Kind != "socket" || !st.Closed {
		t.Errorf("other end closed: %+v, want closed", st)
	}
	p, s = stdinOf(t, nil) // /dev/null
	if st, err := s.ReadStdin(p); err != nil || st.Kind != "" {
		t.Errorf("/dev/null: %+v, %v; want no claim", st, err)
	}
}

// stdout: a pipe whose read end this test holds has a reader; once that
// end is closed, the kernel says no one can read it (POLLERR). A file is
// no claim.
func TestStdout(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pidfd_getfd needs ptrace attach access to the child; Yama may refuse it to a user: run as root (CI does)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	read := func(out *os.File) Stdin {
		cmd := exec.Command("sleep", "60")
		cmd.Stdout = out
		startExeced(t, cmd)
		s, err := ReadSnapshot(DefaultProcRoot)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p := s.Get(cmd.Process.Pid)
		if p == nil {
			t.Fatalf("pid %d is not in the table", cmd.Process.Pid)
		}
		st, err := s.ReadStdout(p)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := read(w); st.Kind != "pipe" || !st.Asked || st.Closed {
		t.Errorf("control: its read end held: %+v; want an open pipe, asked", st)
	}
	w.Close()
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2.Close()
	if st := read(w2); st.Kind != "pipe" || !st.Asked || !st.Closed {
		t.Errorf("no reader: %+v; want a pipe, asked, closed", st)
	}
	w2.Close()
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st := read(f); st.Kind != "" {
		t.Errorf("a file: %+v; want no claim", st)
	}
}

package platform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func (s *Snapshot) readStdin(p *Process) (Stdin, error) {
	if s.Self == 0 || p.Zombie() || p.KernelThread() {
		return Stdin{}, nil
	}
	link, err := os.Readlink(procPath(p.PID, "fd/0"))
	if err != nil {
		if isGone(err) || errors.Is(err, os.ErrNotExist) {
			return Stdin{}, nil // no fd 0, or gone
		}
		return Stdin{}, fmt.Errorf("stdin of %d: %w", p.PID, err)
	}
	var st Stdin
	st.Kind, st.Inode = parseAnonLink(link)
	if st.Kind == "" {
		return Stdin{}, nil
	}
	st.ask(p.PID)
	return st, nil
}

func (s *Snapshot) readStdout(p *Process) (Stdin, error) {
	if s.Self == 0 || p.Zombie() || p.KernelThread() {
		return Stdin{}, nil
	}
	link, err := os.Readlink(procPath(p.PID, "fd/1"))
	if err != nil {
		if isGone(err) || errors.Is(err, os.ErrNotExist) {
			return Stdin{}, nil
		}
		return Stdin{}, fmt.Errorf("stdout of %d: %w", p.PID, err)
	}
	var st Stdin
	st.Kind, st.Inode = parseAnonLink(link)
	if st.Kind == "" {
		return Stdin{}, nil
	}
	fd, ok := st.dup(p.PID, 1)
	if !ok {
		return st, nil
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return st, nil
	}
	st.Asked = true
	switch st.Kind {
	case "pipe":
		st.Closed = fds[0].Revents&unix.POLLERR != 0
	case "socket":
		st.Closed = fds[0].Revents&unix.POLLHUP != 0
	}
	return st, nil
}

// dup is a duplicate of pid's fd n (pidfd_getfd(2)), when it is still
// the pipe or socket st names.
func (st *Stdin) dup(pid, n int) (int, bool) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, false
	}
	fd, err := unix.PidfdGetfd(pidfd, n, 0)
	unix.Close(pidfd)
	if err != nil {
		return -1, false
	}
	var fst unix.Stat_t
	if unix.Fstat(fd, &fst) != nil || fst.Ino != st.Inode {
		unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// ask asks the kernel, on a duplicate of pid's fd 0, whether st can still
// be written to. Where it cannot be asked (gone, no pidfds, no ptrace
// access, fd 0 changed since its link was read), st stays not Asked.
func (st *Stdin) ask(pid int) {
	fd, ok := st.dup(pid, 0)
	if !ok {
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return
	}
	st.Asked = true
	switch st.Kind {
	case "pipe":
		st.Closed = fds[0].Revents&unix.POLLHUP != 0
	case "socket":
		st.Closed = fds[0].Revents&(unix.POLLHUP|unix.POLLRDHUP) != 0
	}
}

// parseAnonLink reads an fd link of the form "pipe:[N]" or "socket:[N]".
func parseAnonLink(link string) (string, uint64) {
	for _, k := range []string{"pipe", "socket"} {
		if rest, ok := strings.CutPrefix(link, k+":["); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil && strings.HasSuffix(rest, "]") {
				return k, n
			}
		}
	}
	return "", 0
}

// unixPeer asks sock_diag (NETLINK_SOCK_DIAG, unix_diag: Linux 3.3+) for
// the inode of the other end of the unix socket ino.
func unixPeer(ino uint64) (uint64, error) {
	if ino > 0xffffffff {
		return 0, errors.ErrUnsupported
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	// struct nlmsghdr, then struct unix_diag_req (linux/unix_diag.h):
	// family, protocol, pad, states, ino, show, cookie[2].
	const (
		hdrLen        = 16
		reqLen        = 24
		udiagShowPeer = 0x4
		unixDiagPeer  = 2
	)
	b := make([]byte, hdrLen+reqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(b[8:], 1)
	b[hdrLen] = unix.AF_UNIX
	ne.PutUint32(b[hdrLen+4:], 0xffffffff) // every state
	ne.PutUint32(b[hdrLen+8:], uint32(ino))
	ne.PutUint32(b[hdrLen+12:], udiagShowPeer)
	ne.PutUint32(b[hdrLen+16:], 0xffffffff) // INET_DIAG_NOCOOKIE
	ne.PutUint32(b[hdrLen+20:], 0xffffffff)
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200000}); err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, err
	}
	return parseUnixDiag(buf[:n], uint32(ino), unixDiagPeer)
}

// parseUnixDiag finds the attribute attr (a u32) in a reply to a unix_diag
// request for ino: a struct nlmsghdr, a struct unix_diag_msg (family,
// type, state, pad, ino, cookie[2]: 16 bytes), then netlink attributes.
func parseUnixDiag(b []byte, ino uint32, attr uint16) (uint64, error) {
	ne := binary.NativeEndian
	if len(b) < 16 {
		return 0, errors.New("sock_diag: short reply")
	}
	msgLen, typ := int(ne.Uint32(b[0:])), ne.Uint16(b[4:])
	if typ == unix.NLMSG_ERROR {
		if len(b) >= 20 {
			if e := int32(ne.Uint32(b[16:])); e != 0 {
				return 0, unix.Errno(-e)
			}
		}
		return 0, errors.New("sock_diag: error")
	}
	if msgLen > len(b) || msgLen < 32 || typ != unix.SOCK_DIAG_BY_FAMILY {
		return 0, errors.New("sock_diag: unexpected reply")
	}
	if ne.Uint32(b[20:]) != ino {
		return 0, errors.New("sock_diag: a reply for another socket")
	}
	for a := b[32:msgLen]; len(a) >= 4; {
		l, t := int(ne.Uint16(a[0:])), ne.Uint16(a[2:])
		if l < 4 || l > len(a) {
			break
		}
		if t == attr && l >= 8 {
			return uint64(ne.Uint32(a[4:])), nil
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return 0, nil // no such attribute: no peer
}

// The bounds of one StdinWriters call. The caller makes one call per
// user whose processes it searches (scan: the finding's user's, then
// root's), so that no user's fds spend another's budget.
const (
	maxFDs   = 512
	maxLinks = 2048
)

func (s *Snapshot) stdinWriters(sts []Stdin, procs []*Process, enough func(map[uint64][]Writer) bool) (w map[uint64][]Writer, unread int) {
	type target struct {
		kind  string
		stdin uint64
	}
	want := map[uint64]target{}
	for _, st := range sts {
		switch {
		case st.Kind == "pipe":
			want[st.Inode] = target{"pipe", st.Inode}
		case st.Kind == "socket":
			// Its other end, asked only now: a finding nothing will
			// report or signal costs no netlink round trip.
			if peer, err := unixPeer(st.Inode); err == nil && peer != 0 {
				want[peer] = target{"socket", st.Inode}
			}
		}
	}
	if len(want) == 0 {
		return nil, 0
	}
	w = map[uint64][]Writer{}
	budget := maxLinks
	for _, p := range procs {
		if p.Zombie() || p.KernelThread() {
			continue
		}
		if budget <= 0 {
			unread++
			continue
		}
		dir := procPath(p.PID, "fd")
		f, err := os.Open(dir)
		if err != nil {
			if !isGone(err) && !errors.Is(err, os.ErrNotExist) {
				unread++
			}
			continue
		}
		limit := min(budget, maxFDs)
		// One name past the limit tells a process read whole from one
		// cut short.
		names, _ := f.Readdirnames(limit + 1)
		f.Close()
		if len(names) > limit {
			names = names[:limit]
			unread++
		}
		budget -= len(names)
		added := false
		for _, name := range names {
			link, err := os.Readlink(dir + "/" + name)
			if err != nil {
				continue
			}
			k, ino := parseAnonLink(link)
			t, ok := want[ino]
			if !ok || k != t.kind || k == "pipe" && !openForWriting(p.PID, name) {
				continue
			}
			fd, _ := strconv.Atoi(name)
			w[t.stdin] = append(w[t.stdin], Writer{PID: p.PID, FD: fd})
			added = true
		}
		if added && enough != nil && enough(w) {
			break
		}
	}
	return w, unread
}

// openForWriting reads the access mode in pid's fdinfo of fd: O_WRONLY or
// O_RDWR (a pipe's two ends share one inode; the flags tell them apart).
func openForWriting(pid int, fd string) bool {
	b, err := os.ReadFile(procPath(pid, "fdinfo/"+fd))
	if err != nil {
		return false
	}
	flags, ok := ParseFdinfoFlags(b)
	return ok && (flags&unix.O_ACCMODE == unix.O_WRONLY || flags&unix.O_ACCMODE == unix.O_RDWR)
}

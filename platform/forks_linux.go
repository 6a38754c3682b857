package platform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Forks are the kernel's process events (the proc connector, cn_proc):
// every fork on the host as it happens, with its parent. The connector
// speaks only to a listener in the initial user and PID namespaces
// (drivers/connector/cn_proc.c, cn_proc_mcast_ctl: outside them it says
// nothing); before Linux 6.6 only with CAP_NET_ADMIN, since then to any
// user ("connector/cn_proc: Allow non-root users access"; measured here:
// nobody's listen on 6.18 is acknowledged and gets every fork). Where it
// cannot be had, the watch samples (LastPID).
type Forks struct {
	fd int
	// nonce marks this socket's listen: its acknowledgement carries it
	// back, plus one, in cn_msg's ack (cn_proc_ack: rcvd_ack + 1; its seq
	// is the kernel's own, measured on 6.18), told apart from the events
	// of other listeners, which reach every socket bound to the group.
	nonce uint32
}

// The proc connector's ids and messages: include/uapi/linux/connector.h
// (CN_IDX_PROC, CN_VAL_PROC; struct cn_msg, 20 bytes) and
// include/uapi/linux/cn_proc.h (PROC_CN_MCAST_LISTEN; struct proc_event:
// what, cpu, timestamp_ns, then the event's data; PROC_EVENT_FORK's is
// parent_pid, parent_tgid, child_pid, child_tgid).
const (
	cnIdxProc         = 1
	cnValProc         = 1
	cnMsgLen          = 20
	procCnMcastListen = 1
	procEventFork     = 1
	procEventData     = 16 // what (4), cpu (4), timestamp_ns (8)
)

func openForks() (*Forks, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_CONNECTOR)
	if err != nil {
		return nil, err
	}
	f := &Forks{fd: fd, nonce: uint32(os.Getpid())<<8 ^ uint32(time.Now().UnixNano())}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: cnIdxProc}); err != nil {
		f.Close()
		return nil, err
	}
	// Room for a drain's worth of events between two reads (Drain): what
	// overflows is lost, a count low, never high.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	if err := f.listen(false); err != nil {
		f.Close()
		return nil, err
	}
	// The kernel acknowledges the listen at once (PROC_EVENT_NONE, its
	// ack.err a refusal), or says nothing: outside the initial
	// namespaces. A second without the ack is a refusal too.
	if err := f.ack(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.listen(true); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// listen sends PROC_CN_MCAST_LISTEN, for forks alone or for every event.
func (f *Forks) listen(forksAlone bool) error {
	input := 4 // enum proc_cn_mcast_op alone
	if forksAlone {
		input = 8 // struct proc_input: mcast_op, event_type
	}
	msg := make([]byte, unix.NLMSG_HDRLEN+cnMsgLen+input)
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], uint32(len(msg)))
	ne.PutUint16(msg[4:], unix.NLMSG_DONE)
	ne.PutUint32(msg[12:], uint32(os.Getpid()))
	cn := msg[unix.NLMSG_HDRLEN:]
	ne.PutUint32(cn[0:], cnIdxProc)
	ne.PutUint32(cn[4:], cnValProc)
	ne.PutUint32(cn[12:], f.nonce)
	ne.PutUint16(cn[16:], uint16(input))
	ne.PutUint32(cn[cnMsgLen:], procCnMcastListen)
	if forksAlone {
		ne.PutUint32(cn[cnMsgLen+4:], procEventFork)
	}
	return unix.Sendto(f.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

// ack reads the listen's acknowledgement, within a second: the
// PROC_EVENT_NONE whose cn_msg carries this listen's nonce back.
// Another listener's events reach this socket too, as soon as it is bound
// to the group — in a PID namespace where this listen is never answered,
// as much as on the host — and are passed over: only the ack says this
// socket was heard.
func (f *Forks) ack() error {
	tv := unix.Timeval{Sec: 1}
	if err := unix.SetsockoptTimeval(f.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Second)
	buf := make([]byte, 64<<10)
	ne := binary.NativeEndian
	for time.Now().Before(deadline) {
		n, _, err := unix.Recvfrom(f.fd, buf, 0)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		at := unix.NLMSG_HDRLEN
		if n < at+cnMsgLen+procEventData+4 || ne.Uint32(buf[at+12:]) != f.nonce+1 || ne.Uint32(buf[at+cnMsgLen:]) != 0 {
			continue // an event, or another socket's ack
		}
		if e := ne.Uint32(buf[at+cnMsgLen+procEventData:]); e != 0 {
			return unix.Errno(e)
		}
		tv = unix.Timeval{}
		return unix.SetsockoptTimeval(f.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	return errors.New("the proc connector did not acknowledge the listen (not the host's namespaces)")
}

func (f *Forks) wait(timeout time.Duration) (bool, error) {
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(f.fd), Events: unix.POLLIN}}, int(timeout.Milliseconds()))
		if !errors.Is(err, unix.EINTR) {
			return n > 0, err
		}
	}
}

func (f *Forks) drain(buf []byte, fork func(parent, child int)) error {
	for {
		n, _, err := unix.Recvfrom(f.fd, buf, unix.MSG_DONTWAIT)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return nil
		case errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.EINTR):
			continue // some were lost: a count low, never high
		case err != nil:
			return err
		}
		parseForks(buf[:n], fork)
	}
}

// parseForks gives each fork of a process in one datagram to fork.
func parseForks(b []byte, fork func(parent, child int)) {
	ne := binary.NativeEndian
	for len(b) >= unix.NLMSG_HDRLEN {
		size := int(ne.Uint32(b[0:]))
		if size < unix.NLMSG_HDRLEN || size > len(b) {
			return
		}
		d := b[unix.NLMSG_HDRLEN:size]
		b = b[min((size+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1), len(b)):]
		if len(d) < cnMsgLen+procEventData+16 {
			continue
		}
		ev := d[cnMsgLen:]
		if ne.Uint32(ev[0:]) != procEventFork {
			continue
		}
		data := ev[procEventData:]
		parentTGID, childPID, childTGID := int32(ne.Uint32(data[4:])), int32(ne.Uint32(data[8:])), int32(ne.Uint32(data[12:]))
		if childPID == childTGID {
			fork(int(parentTGID), int(childTGID))
		}
	}
}

func (f *Forks) close() error { return unix.Close(f.fd) }

// LastPID is the last pid this PID namespace gave a process or a thread
// (/proc/sys/kernel/ns_last_pid, pid_namespaces(7)): sampled, its rise is
// the namespace's own rate of new tasks — a container's, not the host's —
// until it wraps at pid_max (a fall: the caller takes it as a rise past
// any rate). Read once a second, it is kept open and read with pread:
// one system call a read.
type LastPID struct{ fd int }

func openLastPID() (*LastPID, error) {
	fd, err := unix.Open(DefaultProcRoot+"/sys/kernel/ns_last_pid", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: DefaultProcRoot + "/sys/kernel/ns_last_pid", Err: err}
	}
	return &LastPID{fd: fd}, nil
}

func (l *LastPID) read() (int, error) {
	var b [24]byte
	n, err := unix.Pread(l.fd, b[:], 0)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(bytes.TrimSpace(b[:n])))
}

func (l *LastPID) close() error { return unix.Close(l.fd) }

func readUID(pid int) (uint32, error) {
	b, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return 0, err
	}
	uid, ok := ParseStatusUID(b)
	if !ok {
		return 0, errors.New(procPath(pid, "status") + ": no Uid line")
	}
	return uid, nil
}

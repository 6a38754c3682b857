package watch

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// Settle is how long a hint waits before its pass: none here — the
// kernel reparents an exiting process's children before it wakes its
// pidfd's pollers (exit_notify → forget_original_parent, then
// do_notify_pidfd), and a session file's write is announced at its close.
const Settle = 0 * time.Millisecond

// Exits watches processes for their exit: one pidfd each, in one epoll
// set, read by one goroutine that sends each exited pid on C.
type Exits struct {
	ep int
	// f is ep in Go's poller: the reading goroutine parks there, holding
	// no thread while nothing exits; closing it ends the goroutine.
	f *os.File
	exits

	mu    sync.Mutex
	fds   map[Target]int // watched → its pidfd
	pids  map[int]Target // pidfd → what it watches
	close sync.Once
	done  chan struct{}
}

func newWatch() (*Exits, error) {
	self, err := unix.PidfdOpen(unix.Getpid(), 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	unix.Close(self)
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	// Non-blocking, an epoll fd is one Go's poller can wait on (it is
	// readable while an event is ready): no thread blocks in epoll_wait.
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	e := &Exits{ep: ep, f: os.NewFile(uintptr(ep), "pidfds"), exits: newExits(), fds: map[Target]int{}, pids: map[int]Target{}, done: make(chan struct{})}
	go e.read()
	return e, nil
}

func (e *Exits) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.fds)
}

func (e *Exits) setOS(targets []Target) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.set(targets)
}

// set is Set, e.mu held.
func (e *Exits) set(targets []Target) int {
	want := wanted(targets)
	kept, keptBy := 0, map[uint32]int{}
	for t, fd := range e.fds {
		switch {
		case want[t]:
		case exitedFD(fd):
			// It exited while the pass that leaves it out ran: its event
			// may not have been read yet, and dropping its pidfd would
			// lose it — what the owner left is not in that pass's table
			// (a pidfd is readable once its process has exited).
			e.drop(fd)
			e.exited(t)
		case kept < maxDying && keptBy[t.UID] < maxDyingPerUID && dying(t):
			// Its leader has exited, its other threads not yet: a pass
			// takes it for gone (a zombie), but its children are
			// reparented only as its last thread ends, which the pidfd
			// tells — kept until then. (The real Claude Code, SIGKILLed,
			// is such a process for a few hundred milliseconds.)
			kept++
			keptBy[t.UID]++
		default:
			e.drop(fd)
		}
	}
	failed := 0
	for t := range want {
		if _, ok := e.fds[t]; ok {
			continue
		}
		fd, err := unix.PidfdOpen(t.PID, 0)
		if errors.Is(err, unix.ESRCH) {
			e.exited(t)
			continue
		}
		if err != nil {
			failed++
			continue
		}
		if p, err := platform.ReadStat(t.PID); err != nil || p.StartTicks != t.StartTicks || p.Zombie() && exitedFD(fd) {
			unix.Close(fd)
			e.exited(t) // gone, or another process now: what it left is due a look
			continue
		}
		// A zombie leader whose other threads still run is watched: its
		// pidfd is readable once the last has ended (dying).
		if err := unix.EpollCtl(e.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			unix.Close(fd)
			failed++
			continue
		}
		e.fds[t], e.pids[fd] = fd, t
	}
	return failed
}

// maxDying bounds the targets a set keeps though its caller left them
// out (dying): a process may end its leader thread alone and keep its
// others for ever, and its user can start many, each a pidfd of the
// watch's. Each uid's share is bounded first (maxDyingPerUID), so that
// one user's dying processes never push another's out — past a user's
// share, theirs are dropped, and the backstop covers them; past the
// bound, anyone's.
const (
	maxDyingPerUID = 16
	maxDying       = 1024
)

// dying reports whether t's leader has exited and its process not yet:
// the leader shows as a zombie while other threads run or end.
func dying(t Target) bool {
	p, err := platform.ReadStat(t.PID)
	return err == nil && p.StartTicks == t.StartTicks && p.Zombie()
}

// exitedFD reports whether the process of pidfd fd has exited: the pidfd
// polls readable.
func exitedFD(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(p, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0 && p[0].Revents&unix.POLLIN != 0
	}
}

// drop stops watching the pidfd fd (e.mu held).
func (e *Exits) drop(fd int) {
	unix.EpollCtl(e.ep, unix.EPOLL_CTL_DEL, fd, nil)
	unix.Close(fd)
	delete(e.fds, e.pids[fd])
	delete(e.pids, fd)
}

// read waits for exits until Close.
func (e *Exits) read() {
	defer close(e.done)
	rc, err := e.f.SyscallConn()
	if err != nil {
		return
	}
	events := make([]unix.EpollEvent, 64)
	for {
		n := 0
		werr := rc.Read(func(fd uintptr) bool {
			n, err = unix.EpollWait(int(fd), events, 0)
			return err != nil || n > 0 // none ready: wait in the poller
		})
		if werr != nil {
			return // closed
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			e.mu.Lock()
			t, ok := e.pids[fd]
			if ok {
				e.drop(fd)
			}
			e.mu.Unlock()
			if ok {
				e.exited(t)
			}
		}
	}
}

func (e *Exits) closeOS() error {
	e.close.Do(func() {
		e.f.Close() // the reading goroutine's wait ends with it
		<-e.done
		e.mu.Lock()
		for fd := range e.pids {
			unix.Close(fd)
		}
		e.fds, e.pids = map[Target]int{}, map[int]Target{}
		e.mu.Unlock()
	})
	return nil
}

func exitsMechanism() string { return "pidfd and epoll" }

package watch

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// Settle is how long a hint waits before its pass: whether XNU
// reparents an exiting process's children before it fires the
// EVFILT_PROC knote, and how a dir's change comes before its write
// ends, is not checked here, so a pass waits a tenth of a second.
const Settle = 100 * time.Millisecond

// Exits watches processes for their exit: one EVFILT_PROC NOTE_EXIT knote
// each, in one kqueue, read by one goroutine that sends each exited pid on
// C. The kernel ties a knote to the process it was added for, not to its
// pid (kqueue(2): "the process ID to watch"; a knote on an exited process
// fires with EV_EOF once and is gone), so the start checked after the add
// proves which process is watched, as the pidfd does on Linux. Built and
// vetted for darwin here; not yet run on a Mac.
type Exits struct {
	kq int
	exits

	mu    sync.Mutex
	pids  map[int]Target // watched pid → what it watches
	close sync.Once
	done  chan struct{}
}

func newWatch() (*Exits, error) {
	kq, err := newKqueue()
	if err != nil {
		return nil, err
	}
	e := &Exits{kq: kq, exits: newExits(), pids: map[int]Target{}, done: make(chan struct{})}
	go e.read()
	return e, nil
}

func (e *Exits) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pids)
}

func (e *Exits) setOS(targets []Target) int {
	want := wanted(targets)
	e.mu.Lock()
	defer e.mu.Unlock()
	for pid, t := range e.pids {
		if !want[t] {
			// One that exited while the pass that leaves it out ran: its
			// knote may not have been read yet, and deleting it would
			// lose the exit — what the owner left is not in that pass's
			// table.
			p, err := platform.ProcessOf(pid)
			gone := err != nil || p.StartTicks != t.StartTicks || p.Zombie()
			e.drop(pid)
			if gone {
				e.exited(t)
			}
		}
	}
	failed := 0
	for t := range want {
		if w, ok := e.pids[t.PID]; ok && w == t {
			continue
		}
		ev := []unix.Kevent_t{procEvent(t.PID, unix.EV_ADD|unix.EV_ONESHOT)}
		_, err := unix.Kevent(e.kq, ev, nil, nil)
		if errors.Is(err, unix.ESRCH) {
			e.exited(t)
			continue
		}
		if err != nil {
			failed++
			continue
		}
		if p, err := platform.ProcessOf(t.PID); err != nil || p.StartTicks != t.StartTicks || p.Zombie() {
			e.delete(t.PID)
			e.exited(t)
			continue
		}
		e.pids[t.PID] = t
	}
	return failed
}

func procEvent(pid int, flags uint16) unix.Kevent_t {
	return unix.Kevent_t{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: flags, Fflags: unix.NOTE_EXIT}
}

// delete removes pid's knote; one that already fired is gone, and the
// error that says so is no news.
func (e *Exits) delete(pid int) {
	unix.Kevent(e.kq, []unix.Kevent_t{procEvent(pid, unix.EV_DELETE)}, nil, nil)
}

// drop stops watching pid (e.mu held).
func (e *Exits) drop(pid int) {
	e.delete(pid)
	delete(e.pids, pid)
}

// read waits for exits until Close.
func (e *Exits) read() {
	readKqueue(e.kq, e.done, func(ev unix.Kevent_t) {
		if ev.Filter != unix.EVFILT_PROC || ev.Fflags&unix.NOTE_EXIT == 0 {
			return
		}
		pid := int(ev.Ident)
		e.mu.Lock()
		t, ok := e.pids[pid]
		delete(e.pids, pid) // EV_ONESHOT: the knote is gone
		e.mu.Unlock()
		if ok {
			e.exited(t)
		}
	})
}

func (e *Exits) closeOS() error {
	e.close.Do(func() {
		wake(e.kq)
		<-e.done
		e.mu.Lock()
		e.pids = map[int]Target{}
		e.mu.Unlock()
		unix.Close(e.kq)
	})
	return nil
}

func exitsMechanism() string { return "kqueue" }

package watch

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Settle is how long a hint waits before its pass: none. A process's
// handle is signalled once its last thread has ended; Windows moves no
// child anywhere (its parent pid stays the dead one's); and the table's
// read (NtQuerySystemInformation) returns only processes that can still
// run code, not an exited one whose object an open handle keeps
// (P. Yosifovich, "Zombie Processes", 2022; wine alike, measured here) —
// so the next read already shows the dead owner gone.
const Settle = 0 * time.Millisecond

// Exits watches processes for their exit: a handle each (SYNCHRONIZE,
// which pins the pid while it is open), its creation time checked after
// the open, and one thread-pool wait each (RegisterWaitForSingleObject,
// WT_EXECUTEONLYONCE) — the system's wait threads take 63 handles each
// and start more as they are needed, so there is no bound of 64 handles
// to batch around, and no thread of the watch's blocks while nothing
// exits. A wait's callback only queues its target; one goroutine
// unregisters it, closes the handle and sends it on C.
type Exits struct {
	exits
	fired chan struct{} // a callback queued something
	quit  chan struct{} // Close was called

	mu    sync.Mutex
	by    map[Target]*procWait  // watched → its wait
	keys  map[uintptr]*procWait // a wait's key → the wait
	close sync.Once
	done  chan struct{}
}

// procWait is one watched process: its handle and its wait.
type procWait struct {
	t    Target
	h    windows.Handle
	wait windows.Handle
	key  uintptr
}

// waits is every watch's registered waits by key, and the keys whose
// process exited, for the one callback to reach: a callback gets a
// number, never a Go pointer.
var waits = struct {
	sync.Mutex
	next  uintptr
	by    map[uintptr]*Exits // key → the watch it is of
	fired map[*Exits][]uintptr
}{by: map[uintptr]*Exits{}, fired: map[*Exits][]uintptr{}}

// The thread pool's waits, which x/sys does not wrap; the callback is
// made once (Go keeps a fixed number of callbacks for a process's life).
var (
	kernel32                  = windows.NewLazySystemDLL("kernel32.dll")
	procRegisterWaitForSingle = kernel32.NewProc("RegisterWaitForSingleObject")
	procUnregisterWaitEx      = kernel32.NewProc("UnregisterWaitEx")
	exitedCallback            = sync.OnceValue(func() uintptr { return windows.NewCallback(onExit) })
)

// wtExecuteOnlyOnce is WT_EXECUTEONLYONCE (winnt.h): the wait ends with
// its first callback.
const wtExecuteOnlyOnce = 0x00000008

// onExit is the wait's callback, on a thread of the system's pool: it
// queues key for its watch's goroutine and returns at once.
func onExit(key, _ uintptr) uintptr {
	waits.Lock()
	e := waits.by[key]
	if e != nil {
		waits.fired[e] = append(waits.fired[e], key)
	}
	waits.Unlock()
	if e != nil {
		select {
		case e.fired <- struct{}{}:
		default: // a wake is pending: it reads every key queued
		}
	}
	return 0
}

func newWatch() (*Exits, error) {
	if procRegisterWaitForSingle.Find() != nil || procUnregisterWaitEx.Find() != nil {
		return nil, fmt.Errorf("watching exits: no RegisterWaitForSingleObject in kernel32: %w", errors.ErrUnsupported)
	}
	exitedCallback()
	e := &Exits{exits: newExits(), fired: make(chan struct{}, 1), quit: make(chan struct{}),
		by: map[Target]*procWait{}, keys: map[uintptr]*procWait{}, done: make(chan struct{})}
	go e.read()
	return e, nil
}

func (e *Exits) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.by)
}

func (e *Exits) setOS(targets []Target) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.set(targets)
}

// set is Set, e.mu held.
func (e *Exits) set(targets []Target) int {
	want := wanted(targets)
	for t, w := range e.by {
		if !want[t] {
			// One that exited while the pass that leaves it out ran: its
			// wait may have fired unread, and dropping it would lose the
			// exit.
			gone := signalled(w.h)
			e.drop(w)
			if gone {
				e.exited(t)
			}
		}
	}
	failed := 0
	for t := range want {
		if _, ok := e.by[t]; ok {
			continue
		}
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(t.PID))
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			e.exited(t) // no such process: gone since the scan
			continue
		}
		if err != nil {
			failed++
			continue
		}
		if !startIs(h, t.StartTicks) || signalled(h) {
			windows.CloseHandle(h)
			e.exited(t) // gone, or another process now: what it left is due a look
			continue
		}
		w := &procWait{t: t, h: h}
		waits.Lock()
		waits.next++
		w.key = waits.next
		waits.by[w.key] = e
		waits.Unlock()
		if r, _, _ := procRegisterWaitForSingle.Call(uintptr(unsafe.Pointer(&w.wait)), uintptr(h), exitedCallback(), w.key, uintptr(windows.INFINITE), wtExecuteOnlyOnce); r == 0 {
			waits.Lock()
			delete(waits.by, w.key)
			waits.Unlock()
			windows.CloseHandle(h)
			failed++
			continue
		}
		e.by[t], e.keys[w.key] = w, w
	}
	return failed
}

// startIs reports whether h's process was created at start (microseconds
// since the epoch, as the table's StartTicks on Windows).
func startIs(h windows.Handle, start uint64) bool {
	var c, x, k, u windows.Filetime
	if windows.GetProcessTimes(h, &c, &x, &k, &u) != nil {
		return false
	}
	return uint64(max(time.Unix(0, c.Nanoseconds()).UnixMicro(), 0)) == start
}

// signalled reports whether h's process has exited.
func signalled(h windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

// drop stops watching w (e.mu held): its wait unregistered, waiting for
// a callback under way to return (UnregisterWaitEx with
// INVALID_HANDLE_VALUE: the callback takes no lock of e's), then its
// handle closed.
func (e *Exits) drop(w *procWait) {
	waits.Lock()
	delete(waits.by, w.key)
	waits.Unlock()
	procUnregisterWaitEx.Call(uintptr(w.wait), uintptr(windows.InvalidHandle))
	windows.CloseHandle(w.h)
	delete(e.by, w.t)
	delete(e.keys, w.key)
}

// read sends each exit a callback queued, until Close.
func (e *Exits) read() {
	defer close(e.done)
	for {
		select {
		case <-e.fired:
		case <-e.quit:
			return
		}
		waits.Lock()
		keys := waits.fired[e]
		delete(waits.fired, e)
		waits.Unlock()
		for _, key := range keys {
			e.mu.Lock()
			gone := e.keys[key]
			if gone != nil {
				e.drop(gone)
			}
			e.mu.Unlock()
			if gone != nil {
				e.exited(gone.t)
			}
		}
	}
}

func (e *Exits) closeOS() error {
	e.close.Do(func() {
		close(e.quit)
		<-e.done
		e.mu.Lock()
		for _, w := range e.by {
			e.drop(w)
		}
		e.mu.Unlock()
		waits.Lock()
		delete(waits.fired, e)
		waits.Unlock()
	})
	return nil
}

func exitsMechanism() string { return "a thread-pool wait on each process's handle" }

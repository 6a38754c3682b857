package watch

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// wakeIdent is the EVFILT_USER event that ends a reading goroutine.
const wakeIdent = 1

// newKqueue is a kqueue, close-on-exec, with the EVFILT_USER event that
// wake triggers registered.
func newKqueue() (int, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return -1, fmt.Errorf("kqueue: %w", err)
	}
	unix.CloseOnExec(kq)
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR}}
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		unix.Close(kq)
		return -1, fmt.Errorf("kevent EVFILT_USER: %w", err)
	}
	return kq, nil
}

// wake ends the goroutine reading kq.
func wake(kq int) {
	unix.Kevent(kq, []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}}, nil, nil)
}

// readKqueue hands each event of kq but wake's to handle until wake, then
// closes done.
func readKqueue(kq int, done chan struct{}, handle func(ev unix.Kevent_t)) {
	defer close(done)
	events := make([]unix.Kevent_t, 64)
	for {
		n, err := unix.Kevent(kq, nil, events, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			if ev.Filter == unix.EVFILT_USER {
				return
			}
			handle(ev)
		}
	}
}

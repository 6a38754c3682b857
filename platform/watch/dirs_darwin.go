package watch

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// Dirs watches directories for entries made and removed in them: one
// EVFILT_VNODE NOTE_WRITE knote per directory (a directory is written
// when an entry is made, renamed in or out, or removed: kqueue(2)), on a
// descriptor opened with no link followed on the way, in one kqueue read
// by one goroutine. Only that an event
// came, and on which directory, is taken from it. Built and vetted for
// darwin here; not yet run on a Mac.
type Dirs struct {
	kq int
	dirEvents

	mu    sync.Mutex
	fds   map[Dir]int // watched → its descriptor
	dirs  map[int]Dir // descriptor → what it watches
	close sync.Once
	done  chan struct{}
}

func newDirs() (*Dirs, error) {
	kq, err := newKqueue()
	if err != nil {
		return nil, err
	}
	d := &Dirs{kq: kq, dirEvents: newDirEvents(), fds: map[Dir]int{}, dirs: map[int]Dir{}, done: make(chan struct{})}
	go d.read()
	return d, nil
}

func (d *Dirs) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.fds)
}

func (d *Dirs) set(dirs []Dir) int {
	want := map[Dir]bool{}
	for _, dir := range dirs {
		want[dir] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for dir, fd := range d.fds {
		if !want[dir] {
			d.drop(fd)
		}
	}
	failed := 0
	for dir := range want {
		if _, ok := d.fds[dir]; ok {
			continue
		}
		if len(d.fds) >= MaxDirs {
			failed++
			continue
		}
		// No link followed anywhere on the way, and the uid's own dir
		// (platform.OpenDirNoLinks): O_NOFOLLOW alone guards only the
		// last component. (O_RDONLY rather than O_EVTONLY: the descriptor
		// keeps the volume from being unmounted while it is watched.)
		fd, err := platform.OpenDirNoLinks(dir.Path, int(dir.UID))
		if err != nil {
			failed++
			continue
		}
		ev := []unix.Kevent_t{{Ident: uint64(fd), Filter: unix.EVFILT_VNODE, Flags: unix.EV_ADD | unix.EV_CLEAR,
			Fflags: unix.NOTE_WRITE | unix.NOTE_DELETE | unix.NOTE_RENAME | unix.NOTE_REVOKE}}
		if _, err := unix.Kevent(d.kq, ev, nil, nil); err != nil {
			unix.Close(fd)
			failed++
			continue
		}
		d.fds[dir], d.dirs[fd] = fd, dir
	}
	return failed
}

// drop stops watching the directory open as fd (d.mu held); closing the
// descriptor removes its knote.
func (d *Dirs) drop(fd int) {
	unix.Close(fd)
	delete(d.fds, d.dirs[fd])
	delete(d.dirs, fd)
}

// read waits for events until Close. A directory deleted, renamed or
// revoked is told once more and no longer watched.
func (d *Dirs) read() {
	readKqueue(d.kq, d.done, func(ev unix.Kevent_t) {
		if ev.Filter != unix.EVFILT_VNODE {
			return
		}
		fd := int(ev.Ident)
		d.mu.Lock()
		dir, ok := d.dirs[fd]
		if ok && ev.Fflags&(unix.NOTE_DELETE|unix.NOTE_RENAME|unix.NOTE_REVOKE) != 0 {
			d.drop(fd)
		}
		d.mu.Unlock()
		if ok {
			d.changed(dir)
		}
	})
}

func (d *Dirs) closeOS() error {
	d.close.Do(func() {
		wake(d.kq)
		<-d.done
		d.mu.Lock()
		for fd := range d.dirs {
			unix.Close(fd)
		}
		d.fds, d.dirs = map[Dir]int{}, map[int]Dir{}
		d.mu.Unlock()
		unix.Close(d.kq)
	})
	return nil
}

func dirsMechanism() string { return "kqueue, a descriptor per directory" }

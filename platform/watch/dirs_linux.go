package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform"
)

// Dirs watches directories for entries made and removed in them: one
// inotify instance (inotify(7)), one watch per directory, read by one
// goroutine. Only that an event came, and on which watch, is taken from
// it: the names in the events are what a user wrote, and are not read.
type Dirs struct {
	f   *os.File // the inotify fd, non-blocking: Close ends the read
	ifd int      // the same fd, for inotify_add_watch (f.Fd would make it blocking)
	dirEvents

	mu   sync.Mutex
	wds  map[Dir]int // watched → its watch descriptor
	dirs map[int]Dir // watch descriptor → what it watches
	done chan struct{}
}

// dirMask is the events that say an entry came, went or was written: a
// file made or renamed into the dir (IN_CREATE, IN_MOVED_TO — an atomic
// write), removed (IN_DELETE, IN_MOVED_FROM), or written and closed
// (IN_CLOSE_WRITE): a client that starts at a pid a dead one had writes
// over that one's file in place, with no entry made, and the watch's
// read of the dir by change reads what the events name. IN_ONLYDIR: a
// path that is no directory is not watched. No link is followed on the
// way (addWatch).
const dirMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_CLOSE_WRITE | unix.IN_ONLYDIR

// addWatch watches dir without following a link anywhere on its path:
// IN_DONT_FOLLOW guards only the last component, so a user who swaps a
// directory on the way for a link between a pass and this call would make
// root watch another directory and count its events as that user's
// hints. The directory is opened from / one component at a time with
// O_NOFOLLOW (platform.OpenDirNoLinks), must be the uid's whose state it
// is, and the watch is added through /proc/self/fd/N, which names that
// open directory and nothing else.
func (d *Dirs) addWatch(dir Dir) (int, error) {
	fd, err := platform.OpenDirNoLinks(dir.Path, int(dir.UID))
	if err != nil {
		return -1, err
	}
	defer unix.Close(fd)
	return unix.InotifyAddWatch(d.ifd, platform.DefaultProcRoot+"/self/fd/"+strconv.Itoa(fd), dirMask)
}

func newDirs() (*Dirs, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	d := &Dirs{f: os.NewFile(uintptr(fd), "inotify"), ifd: fd, dirEvents: newDirEvents(),
		wds: map[Dir]int{}, dirs: map[int]Dir{}, done: make(chan struct{})}
	go d.read()
	return d, nil
}

func (d *Dirs) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.wds)
}

func (d *Dirs) set(dirs []Dir) int {
	want := map[Dir]bool{}
	for _, dir := range dirs {
		want[dir] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for dir, wd := range d.wds {
		if !want[dir] {
			d.drop(wd)
			unix.InotifyRmWatch(d.ifd, uint32(wd))
		}
	}
	failed := 0
	for dir := range want {
		if _, ok := d.wds[dir]; ok {
			continue
		}
		if len(d.wds) >= MaxDirs {
			failed++
			continue
		}
		wd, err := d.addWatch(dir)
		if err != nil {
			failed++
			continue
		}
		if _, ok := d.dirs[wd]; ok {
			// Another name of a directory already watched (a bind
			// mount): one watch, and its events are the first dir's.
			continue
		}
		d.wds[dir], d.dirs[wd] = wd, dir
	}
	return failed
}

// drop forgets watch wd (d.mu held).
func (d *Dirs) drop(wd int) {
	delete(d.wds, d.dirs[wd])
	delete(d.dirs, wd)
}

// read waits for events until Close. Each event's fixed part says its
// watch; what follows, the entry's name.
func (d *Dirs) read() {
	defer close(d.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := d.f.Read(buf)
		if err != nil {
			return // closed
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			wd := int(int32(binary.NativeEndian.Uint32(b[0:])))
			mask := binary.NativeEndian.Uint32(b[4:])
			skip := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:]))
			if skip > len(b) {
				break
			}
			// The entry's name follows, NUL-padded (inotify(7)).
			name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:skip], "\x00"))
			b = b[skip:]
			if mask&unix.IN_Q_OVERFLOW != 0 {
				d.changed(Dir{}) // events were lost: any dir may have changed
				continue
			}
			d.mu.Lock()
			dir, ok := d.dirs[wd]
			if ok && mask&unix.IN_IGNORED != 0 {
				d.drop(wd) // the dir went: its watch with it
			}
			d.mu.Unlock()
			if ok {
				if mask&unix.IN_IGNORED == 0 {
					dir.Name = name
				}
				d.changed(dir)
			}
		}
	}
}

func (d *Dirs) closeOS() error {
	err := d.f.Close()
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	<-d.done
	return err
}

// inotifyLimit is where the kernel keeps the inotify watches one user may
// hold (inotify(7)): a root watch of every account's sessions dir holds
// one each.
const inotifyLimit = "/proc/sys/fs/inotify/max_user_watches"

func dirsMechanism() string {
	if b, err := os.ReadFile(inotifyLimit); err == nil {
		return fmt.Sprintf("inotify; %s is %s", inotifyLimit, strings.TrimSpace(string(b)))
	}
	return "inotify"
}

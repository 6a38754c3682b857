package watch

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Dirs watches directories for entries made, removed and written in
// them: a handle per directory, opened with no reparse point followed at
// its last component, and one ReadDirectoryChangesW read each always
// under way, every one completing on one I/O completion port that one
// goroutine waits on. A read whose buffer overflowed (it completes with
// no bytes) says events were lost.
//
// The entry names the events carry are taken as they come, as on Linux:
// the watch reads only dirs of reaper's own user on Windows, where no
// reader child reads another user's (a pass leaves those dirs out).
type Dirs struct {
	port windows.Handle
	dirEvents

	mu   sync.Mutex
	by   map[Dir]*dirWatch
	keys map[uintptr]*dirWatch
	// closing is the watches dropped with a read still under way: the
	// kernel writes their buffers until the read's cancellation is
	// dequeued, so they are kept until then.
	closing map[uintptr]*dirWatch
	next    uintptr
	done    chan struct{}
}

// dirWatch is one watched directory and its read under way.
type dirWatch struct {
	dir     Dir
	h       windows.Handle
	key     uintptr
	pending bool
	ov      windows.Overlapped
	buf     [256]uint32 // FILE_NOTIFY_INFORMATION records, DWORD-aligned
}

// dirChanges is what a read is told of: an entry made, removed or
// renamed (a file's or a dir's name), or written (a client that starts at
// a dead one's pid writes over that one's file in place).
const dirChanges = windows.FILE_NOTIFY_CHANGE_FILE_NAME | windows.FILE_NOTIFY_CHANGE_DIR_NAME | windows.FILE_NOTIFY_CHANGE_LAST_WRITE

// wakeKey is the completion that ends the reading goroutine, once the
// reads cancelled have ended (each within closeWait milliseconds of the
// last: a read the system never ends is not waited for longer).
const (
	wakeKey   = 0
	closeWait = 1000
)

// drained reports whether no cancelled read is under way.
func (d *Dirs) drained() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.closing) == 0
}

func newDirs() (*Dirs, error) {
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		return nil, err
	}
	d := &Dirs{port: port, dirEvents: newDirEvents(), by: map[Dir]*dirWatch{}, keys: map[uintptr]*dirWatch{},
		closing: map[uintptr]*dirWatch{}, done: make(chan struct{})}
	go d.read()
	return d, nil
}

func (d *Dirs) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.by)
}

func (d *Dirs) set(dirs []Dir) int {
	want := map[Dir]bool{}
	for _, dir := range dirs {
		want[dir] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for dir, w := range d.by {
		if !want[dir] {
			d.drop(w)
		}
	}
	failed := 0
	for dir := range want {
		if _, ok := d.by[dir]; ok {
			continue
		}
		if len(d.by) >= MaxDirs {
			failed++
			continue
		}
		h, err := openDir(dir.Path)
		if err != nil {
			failed++
			continue
		}
		d.next++
		w := &dirWatch{dir: dir, h: h, key: d.next}
		if _, err := windows.CreateIoCompletionPort(h, d.port, w.key, 0); err != nil {
			windows.CloseHandle(h)
			failed++
			continue
		}
		if d.arm(w) != nil {
			windows.CloseHandle(h)
			failed++
			continue
		}
		d.by[dir], d.keys[w.key] = w, w
	}
	return failed
}

// openDir opens path to read its changes: a directory, not a reparse
// point (a junction or a link in its place is refused, not followed),
// shared so that its owner may still rename and remove in and around it.
func openDir(path string) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	h, err := windows.CreateFile(p, windows.FILE_LIST_DIRECTORY,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0, err
	}
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		windows.CloseHandle(h)
		return 0, err
	}
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 || fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return 0, windows.ERROR_DIRECTORY
	}
	return h, nil
}

// arm starts w's next read (d.mu held).
func (d *Dirs) arm(w *dirWatch) error {
	w.ov = windows.Overlapped{}
	err := windows.ReadDirectoryChanges(w.h, (*byte)(unsafe.Pointer(&w.buf[0])), uint32(unsafe.Sizeof(w.buf)), false, dirChanges, nil, &w.ov, 0)
	w.pending = err == nil
	return err
}

// drop stops watching w (d.mu held): its read cancelled, its handle
// closed; a read under way keeps it in closing until its end is dequeued.
func (d *Dirs) drop(w *dirWatch) {
	if w.pending {
		windows.CancelIoEx(w.h, &w.ov)
		d.closing[w.key] = w
	}
	windows.CloseHandle(w.h)
	delete(d.by, w.dir)
	delete(d.keys, w.key)
}

// read waits for the reads' completions until Close.
func (d *Dirs) read() {
	defer close(d.done)
	wait := uint32(windows.INFINITE)
	for {
		var n uint32
		var key uintptr
		var ov *windows.Overlapped
		err := windows.GetQueuedCompletionStatus(d.port, &n, &key, &ov, wait)
		if ov == nil {
			if key != wakeKey && err == nil {
				continue
			}
			if err != nil || d.drained() {
				return // the port failed; or Close, and no read is under way (or one never ended)
			}
			wait = closeWait // Close: the cancelled reads' ends are dequeued first
			continue
		}
		d.mu.Lock()
		if _, ok := d.closing[key]; ok {
			delete(d.closing, key) // a dropped watch's read ended: its buffer is free
			left := len(d.closing)
			d.mu.Unlock()
			if wait != windows.INFINITE && left == 0 {
				return
			}
			continue
		}
		w := d.keys[key]
		if w == nil {
			d.mu.Unlock()
			continue
		}
		w.pending = false
		var names []string
		lost := err == nil && n == 0 // the buffer overflowed: whatever changed is not known
		if err == nil && n > 0 {
			names = notifyNames(w.buf[:], n)
		}
		dir := w.dir
		if err != nil || d.arm(w) != nil {
			d.drop(w) // the dir went, or can no longer be read: its watch with it
			names = nil
		}
		d.mu.Unlock()
		switch {
		case lost:
			d.changed(Dir{})
		case len(names) == 0:
			d.changed(dir)
		default:
			for _, name := range names {
				dir.Name = name
				d.changed(dir)
			}
		}
	}
}

// notifyNames is the entry names of the FILE_NOTIFY_INFORMATION records
// in buf's first n bytes; a record that does not fit ends the list.
func notifyNames(buf []uint32, n uint32) []string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), min(int(n), len(buf)*4))
	var names []string
	for off := 0; off+12 <= len(b); {
		next := int(*(*uint32)(unsafe.Pointer(&b[off])))
		size := int(*(*uint32)(unsafe.Pointer(&b[off+8])))
		if off+12+size > len(b) || size%2 != 0 {
			break
		}
		names = append(names, windows.UTF16ToString(unsafe.Slice((*uint16)(unsafe.Pointer(&b[off+12])), size/2)))
		if next == 0 || next%4 != 0 {
			break
		}
		off += next
	}
	return names
}

func (d *Dirs) closeOS() error {
	d.mu.Lock()
	if d.port == 0 {
		d.mu.Unlock()
		return nil
	}
	for _, w := range d.by {
		d.drop(w)
	}
	d.mu.Unlock()
	windows.PostQueuedCompletionStatus(d.port, 0, wakeKey, nil)
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	err := windows.CloseHandle(d.port)
	d.port = 0
	return err
}

func dirsMechanism() string { return "ReadDirectoryChangesW, one handle per directory" }

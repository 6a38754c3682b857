package run

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform/kill"
)

// StoppedPath is where a reap writes down what it stops and confines
// (StopLog), beside the lock that the reap holds while it writes.
func StoppedPath(lockFile string) string {
	return strings.TrimSuffix(lockFile, ".lock") + ".stopped"
}

// maxStopLog bounds what a recovery reads of a record: a run stops at
// most its trees' members, rescans included.
const maxStopLog = 16 << 20

// StopLog is a reap's record of what it stopped and confined, written
// before each SIGSTOP and each move (reap.Journal) and removed when the
// reap ends as it should. A reap that dies anyway — SIGKILL, the OOM
// killer, a power cut of the service alone — leaves it behind, and the
// next reap (a run, a watch's pass, `reaper run`'s) resumes every
// process it names that is still stopped and releases every confinement
// it names (recoverStopped): a tree reaper stopped is never left stopped,
// and a cgroup of reaper's never left on the host. It is the reaper's own
// file, in the lock's directory, read only while holding the lock.
type StopLog struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// stopEntry is one line of a StopLog.
type stopEntry struct {
	Stop    int    `json:"stop,omitempty"`
	Move    int    `json:"move,omitempty"`
	Start   uint64 `json:"start,omitempty"`
	Confine string `json:"confine,omitempty"`
	From    string `json:"from,omitempty"`
}

// openStopLog starts an empty record at path: a regular file of the
// reaper's own user with no other name, never through a link, emptied
// only once that is proven (a --lock-file in a directory others can
// write must not make root truncate what another name of it is).
func openStopLog(path string) (*StopLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record of what is stopped %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("record of what is stopped %s: %w", path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || ok && (st.Uid != EUID() || st.Nlink != 1) {
		f.Close()
		return nil, fmt.Errorf("record of what is stopped %s is not a file of this reaper's own: not used", path)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("record of what is stopped %s: %w", path, err)
	}
	return &StopLog{path: path, f: f}, nil
}

func (l *StopLog) write(e stopEntry) {
	b, _ := json.Marshal(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	// No fsync: what this record guards against is the reaper's process
	// dying, after which the kernel still writes what it was given; a
	// host that goes down takes the stopped processes with it.
	l.f.Write(append(b, '\n'))
}

// Stopping records a process about to be stopped (reap.Journal).
func (l *StopLog) Stopping(pid int, start uint64) { l.write(stopEntry{Stop: pid, Start: start}) }

// Confining records a confinement made (reap.Journal).
func (l *StopLog) Confining(path string) { l.write(stopEntry{Confine: path}) }

// Moving records a process about to be moved into a confinement
// (reap.Journal).
func (l *StopLog) Moving(path string, pid int, start uint64, from string) {
	l.write(stopEntry{Move: pid, Start: start, Confine: path, From: from})
}

// done ends the record: the reap finished what it started.
func (l *StopLog) done() {
	l.f.Close()
	os.Remove(l.path)
}

// recoverStopped finishes from the record at path what a reap that died
// left: each confinement it names is released (its processes moved back
// to the cgroups they came from, the cgroup removed), and each process it
// stopped that is still stopped — the same pid and start — is continued.
// Nothing is killed: the tree is judged again by this pass, as if the dead
// run had never touched it. It returns what it did, for the report, and
// removes the record.
func recoverStopped(path string) []string {
	b, err := readOwn(path, maxStopLog)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return []string{fmt.Sprintf("the record of what a reaper stopped, %s: %v: not recovered", path, err)}
		}
		return nil
	}
	var stopped []kill.Target
	type confinement struct {
		from  map[int]string
		first string
	}
	confs := map[string]*confinement{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var e stopEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line cut short as the reaper died
		}
		if e.Confine != "" && confs[e.Confine] == nil {
			confs[e.Confine] = &confinement{from: map[int]string{}}
			order = append(order, e.Confine)
		}
		switch {
		case e.Stop > 0:
			stopped = append(stopped, kill.Target{PID: e.Stop, StartTicks: e.Start})
		case e.Move > 0 && e.Confine != "":
			c := confs[e.Confine]
			c.from[e.Move] = e.From
			if c.first == "" {
				c.first = e.From
			}
		}
	}
	var notes []string
	g := kill.NewGuard(nil)
	for _, path := range order {
		c, err := g.Reconfined(path, confs[path].from, confs[path].first)
		if err != nil {
			continue // gone with its processes, or never made
		}
		n := len(c.Procs())
		if err := c.Release(); err != nil {
			notes = append(notes, fmt.Sprintf("a reaper that died left confinement %s: %v", path, err))
		} else if n > 0 {
			notes = append(notes, fmt.Sprintf("a reaper that died left %s in confinement %s: moved back and the cgroup removed", audit.Plural(n, "process"), path))
		}
	}
	resumed := 0
	for _, t := range stopped {
		h, err := kill.Open(t, g)
		if err != nil {
			continue // gone, or another process now
		}
		if h.State() == "T" && h.Signal(syscall.SIGCONT) == nil {
			resumed++
		}
		h.Close()
	}
	if resumed > 0 {
		notes = append(notes, fmt.Sprintf("a reaper that died had stopped %s still stopped: continued, and judged again by this pass", audit.Plural(resumed, "process")))
	}
	os.Remove(path)
	return notes
}

// readOwn reads the file at path, of at most max bytes, when it is a
// regular file of the reaper's own user with no other name, reached
// through no link: a record beside the lock is the reaper's word only if
// no one else could have written it (a --lock-file in a directory others
// can write).
func readOwn(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || ok && (st.Uid != EUID() || st.Nlink != 1) {
		return nil, fmt.Errorf("%s is not a file of this reaper's own: not read", path)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: larger than %d bytes: not read", path, max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

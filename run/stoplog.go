package run

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
)

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

// openStopLog starts an empty record at path: one of the reaper's own
// files (platform.OpenOwn), emptied only once that is proven — a
// --lock-file in a directory others can write must not make root block on
// a FIFO there, or truncate what another name of the file is.
func openStopLog(path string) (*StopLog, error) {
	f, err := platform.OpenOwn(path, platform.OwnTruncate)
	if err != nil {
		return nil, fmt.Errorf("record of what is stopped: %w: not used", err)
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
	b, err := platform.ReadOwn(path, maxStopLog)
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
		if h.State() == "T" && h.Signal(kill.Continue) == nil {
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

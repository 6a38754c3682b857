package ledger

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// WriteFile replaces the ledger at path atomically: a temporary file in the
// same directory, fsync, rename over path, fsync of the directory. A reader
// sees the old document or the new one, never a mix, and after a crash the
// rename either happened or did not.
func WriteFile(path string, l *Ledger) error {
	l.Version = Version
	if l.Sessions == nil {
		l.Sessions = []Session{}
	}
	if l.Runs == nil {
		l.Runs = []Run{}
	}
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ledger: %w", err)
	}
	data = append(data, '\n')
	if err := platform.WriteFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// Writer keeps one owner's ledger and rewrites its file on every change. It
// is safe for concurrent use by the goroutines of a supervisor.
type Writer struct {
	mu   sync.Mutex
	path string
	l    Ledger
}

// NewWriter starts a ledger for owner at path and writes it at once, so a
// reaper sees the new owner (and its start identity) before any run.
func NewWriter(path string, owner Owner) (*Writer, error) {
	w := &Writer{path: path, l: Ledger{Version: Version, Owner: owner, Sessions: []Session{}, Runs: []Run{}}}
	return w, WriteFile(path, &w.l)
}

// Update applies change to the ledger and writes it. If writing fails the
// change is kept in memory and the error returned: the next Update retries.
func (w *Writer) Update(change func(l *Ledger)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	change(&w.l)
	return WriteFile(w.path, &w.l)
}

// StartRun records a run right after its process was spawned. r.Start must
// be the child's start identity (platform.StartIdentity gives it on Linux).
func (w *Writer) StartRun(r Run) error {
	if r.State == "" {
		r.State = RunRunning
	}
	return w.Update(func(l *Ledger) {
		if old := l.Run(r.ID); old != nil {
			*old = r
			return
		}
		l.Runs = append(l.Runs, r)
	})
}

// EndRun marks a run done once its process was reaped or killed. Until the
// supervisor has confirmed the process is gone it should leave the run
// running: a done run whose process lives is what reaper reports as
// run-done.
func (w *Writer) EndRun(id string, endedAt time.Time) error {
	return w.Update(func(l *Ledger) {
		if r := l.Run(id); r != nil {
			r.State = RunDone
			t := endedAt.UTC()
			r.EndedAt = &t
		}
	})
}

// RemoveRun forgets a run whose process is confirmed gone, to keep the
// ledger short.
func (w *Writer) RemoveRun(id string) error {
	return w.Update(func(l *Ledger) {
		l.Runs = slices.DeleteFunc(l.Runs, func(r Run) bool { return r.ID == id })
	})
}

// SetSession records a session's state (active, reset, closed).
func (w *Writer) SetSession(s Session) error {
	return w.Update(func(l *Ledger) {
		if old := l.Session(s.Key); old != nil {
			*old = s
			return
		}
		l.Sessions = append(l.Sessions, s)
	})
}

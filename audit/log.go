package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
)

// Record is one line of the JSONL audit log: a decision about a finding.
// Signals sent by the reaper are recorded with Signal set.
type Record struct {
	Time    time.Time      `json:"time"`
	Event   string         `json:"event"` // "decision" or "signal"
	Mode    string         `json:"mode"`
	RootPID int            `json:"root_pid"`
	PID     int            `json:"pid,omitempty"`
	Start   string         `json:"start"`
	PIDs    []int          `json:"pids,omitempty"`
	Kind    string         `json:"kind,omitempty"`
	Reasons []string       `json:"reasons,omitempty"`
	Rule    string         `json:"rule,omitempty"`
	Action  string         `json:"action,omitempty"`
	Outcome policy.Outcome `json:"outcome,omitempty"`
	Detail  string         `json:"detail,omitempty"`
	Signal  string         `json:"signal,omitempty"`
	Via     string         `json:"via,omitempty"` // "cgroup.kill PATH" for a cgroup killed as a unit ("TerminateJobObject" a job); "TerminateProcess" for a signal on Windows
	Result  string         `json:"result,omitempty"`
	// A decision also says whose tree it was and what it was: the root's
	// real uid and user, its command line and the tree's RSS.
	UID      *int64 `json:"uid,omitempty"`
	User     string `json:"user,omitempty"`
	Cmdline  string `json:"cmdline,omitempty"`
	RSSBytes uint64 `json:"rss_bytes,omitempty"`
}

// AppendLog appends to the file at path the signal records the run sent
// (in the order sent), then one decision record per finding of r, creating
// the file (mode 0640) if needed. Each record is one write(2) of one line
// to a file opened O_APPEND, so concurrent runs never interleave within a
// line.
func AppendLog(path string, r *Report, signals []Record) error {
	f, err := openLog(path)
	if err != nil {
		return err
	}
	for _, rec := range signals {
		rec.Mode = r.Mode
		if err := writeRecord(f, path, rec); err != nil {
			f.Close()
			return err
		}
	}
	for _, fd := range r.Findings {
		rec := Record{
			Time: r.Time, Event: "decision", Mode: r.Mode, RootPID: fd.RootPID, Start: fd.Start,
			PIDs: fd.PIDs, Kind: fd.Kind, Reasons: fd.Reasons, Rule: fd.Rule,
			Action: fd.Action, Outcome: fd.Outcome, Detail: fd.Detail,
			UID: &fd.UID, User: fd.User, Cmdline: fd.Cmdline, RSSBytes: fd.RSSBytes,
		}
		if err := writeRecord(f, path, rec); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close audit log %s: %w", path, err)
	}
	return nil
}

// CheckLog opens the audit log at path as AppendLog does, and closes it,
// writing nothing: a run that acts asks first whether its record can be
// kept (no act unrecorded).
func CheckLog(path string) error {
	f, err := openLog(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// openLog opens the audit log for appending, its dir made first.
func openLog(path string) (*os.File, error) {
	// A user's default log is below ~/.local/state, which a first run
	// may not have made yet.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	// One of reaper's own files (platform.OpenOwn): no link on the way, no
	// FIFO, no other user's file appended to. Where the platform has no
	// such rule yet (Windows), the plain open.
	f, err := platform.OpenOwn(path, platform.OwnAppend)
	if errors.Is(err, errors.ErrUnsupported) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	}
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return f, nil
}

func writeRecord(f *os.File, path string, rec Record) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write audit log %s: %w", path, err)
	}
	return nil
}

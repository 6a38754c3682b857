package ledger

import (
	"errors"
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// Version is the ledger format version this package reads and writes.
const Version = 1

// Ledger is one owner's record of what it started.
type Ledger struct {
	Version  int       `json:"version"`
	Owner    Owner     `json:"owner"`
	Sessions []Session `json:"sessions"`
	Runs     []Run     `json:"runs"`

	// Source is where the ledger was read from (a file, or an OpenClaw
	// state file and what in it); not part of the format.
	Source string `json:"-"`
	// Speaker is the uid whose word the ledger is: the owner of the file
	// or state dir it was read from. Root's word (0) is about any process;
	// any other uid's only about that uid's own processes — the scan
	// applies this to every claim the ledger makes. Not part of the format.
	Speaker uint32 `json:"-"`
}

// Owner is the supervisor process that writes the ledger.
type Owner struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// Start is the owner's start identity: "<boot_id>:<starttime>" on Linux,
	// "<seconds>.<microseconds>" on macOS.
	Start string `json:"start,omitempty"`
	// Instance identifies this run of the owner (a fresh id per start).
	Instance string `json:"instance,omitempty"`

	// Gone, when set, says the source itself proves this owner is gone (a
	// lease older than the gateway now holding the state dir belongs to a
	// previous generation). Not part of the format.
	Gone string `json:"-"`
}

// SessionState is the state of a session.
type SessionState string

// The session states of a ledger (ledger/schema.json).
const (
	SessionActive SessionState = "active"
	SessionReset  SessionState = "reset"
	SessionClosed SessionState = "closed"
)

// Session is a logical session of the owner; sessions form a tree through
// Parent, and a run belongs to one.
type Session struct {
	Key    string       `json:"key"`
	Parent string       `json:"parent,omitempty"`
	State  SessionState `json:"state"`
}

// RunState is the state of a run.
type RunState string

// The run states of a ledger (ledger/schema.json).
const (
	RunRunning RunState = "running"
	RunDone    RunState = "done"
)

// Kind is what a run is (ledger/schema.json); the scan classifies trees no run names
// into the same kinds.
type Kind string

// The kinds.
const (
	KindPTY   Kind = "pty"
	KindACP   Kind = "acp"
	KindMCP   Kind = "mcp"
	KindExec  Kind = "exec"
	KindOther Kind = "other"
)

// Kinds lists every kind, for validation.
var Kinds = []Kind{KindPTY, KindACP, KindMCP, KindExec, KindOther}

// Run is one process the owner started: the root of a tree it answers for.
type Run struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind,omitempty"`
	PID  int    `json:"pid"`
	PGID int    `json:"pgid,omitempty"`
	// Start is the process's start identity. A run without one proves
	// nothing about the process at PID and never authorises a signal.
	Start     string     `json:"start,omitempty"`
	Session   string     `json:"session,omitempty"`
	Scope     string     `json:"scope,omitempty"`
	Backend   string     `json:"backend,omitempty"`
	Command   string     `json:"command,omitempty"`
	State     RunState   `json:"state"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`

	// ArgvProof is another way to prove which process PID is, for sources
	// that record no start identity but put a unique token on the command
	// line (OpenClaw's ACP wrappers carry --openclaw-acpx-lease-id ID): the
	// process is this run only if its argv holds ArgvProof[0] followed by
	// ArgvProof[1]. Not part of the format.
	ArgvProof [2]string `json:"-"`
	// Line is where the run is in its file, when known. Not part of the format.
	Line int `json:"-"`
	// Proof says how a source that records no pid tied the run to its
	// process (OpenClaw's exec rows: by command text and start time, the
	// only match); it goes into the evidence. Note says why a run names no
	// pid at all (no match, or several). Neither is part of the format.
	Proof string `json:"-"`
	Note  string `json:"-"`
	// Superseded says why the live owner replaced this run with a newer
	// one without stopping it (a client's own log): the run is proven left
	// behind under its live owner. Not part of the format.
	Superseded string `json:"-"`
}

// Verifiable reports whether anything in r can prove which process r.PID is.
func (r *Run) Verifiable() bool { return r.Start != "" || r.ArgvProof[1] != "" }

// Session returns the session with key, or nil.
func (l *Ledger) Session(key string) *Session {
	for i := range l.Sessions {
		if l.Sessions[i].Key == key {
			return &l.Sessions[i]
		}
	}
	return nil
}

// Run returns the run with id, or nil.
func (l *Ledger) Run(id string) *Run {
	for i := range l.Runs {
		if l.Runs[i].ID == id {
			return &l.Runs[i]
		}
	}
	return nil
}

// EndedSession returns the first session, from key up through its parents,
// that was reset or closed, or nil when the chain is active (or unknown).
// A parent cycle ends the walk.
func (l *Ledger) EndedSession(key string) *Session {
	seen := map[string]bool{}
	for key != "" && !seen[key] {
		seen[key] = true
		s := l.Session(key)
		if s == nil {
			return nil
		}
		if s.State == SessionReset || s.State == SessionClosed {
			return s
		}
		key = s.Parent
	}
	return nil
}

// Error is a problem with a ledger file, with the line when it is known.
type Error struct {
	File string
	Line int
	Msg  string
	// Err is the cause when the file could not be read at all (missing,
	// not a regular file, a link refused): callers tell "cannot open"
	// from "invalid" with errors.Is on it.
	Err error
}

// Unwrap returns the cause of a file that could not be read.
func (e *Error) Unwrap() error { return e.Err }

// ReadError is the Error for a file that could not be read: the message
// names the cause, never the content.
func ReadError(path string, err error) *Error {
	var fe *platform.FileError
	msg := err.Error()
	if errors.As(err, &fe) {
		msg = fe.Err.Error()
	}
	return &Error{File: path, Msg: msg, Err: err}
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

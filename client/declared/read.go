package declared

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// maxSessions bounds the session files read from one dir: a few per
// running client, so more is a user filling the dir.
const maxSessions = 256

// Raw is what one session dir's files say, read and bounded but not
// judged.
type Raw struct {
	statedir.Head
	Sessions []Session `json:"sessions,omitempty"`
}

// Warnings are the files of another owner, not read.
func (r *Raw) Warnings() []string { return append([]string{}, r.Skipped...) }

// Session is one session file: its process and when it started (ms since
// the epoch; 0: not said), and the session's id.
type Session struct {
	File    string `json:"file"`
	PID     int    `json:"pid"`
	Started int64  `json:"started,omitempty"`
	ID      string `json:"id"`
}

// Read reads the session files of dir, as its owner: those whose names
// match the pattern, at most maxSessions (more is the owner's doubt).
func (a Adapter) Read(dir string) *Raw {
	head, sd, ok := statedir.Start(dir)
	raw := &Raw{Head: head}
	if !ok {
		return raw
	}
	// By need (statedir.Choose): the files of live pids first, where
	// the name gives the pid, then the newest; a client leaves the file
	// of a process that was killed, so the oldest past the bound are said,
	// not doubt.
	match := func(n string) bool { ok, _ := path.Match(a.Spec.Pattern, n); return ok }
	namePID := func(string) int { return 0 }
	if a.Spec.PIDFromName {
		namePID = leadingPID
	}
	chosen, err := statedir.Choose(sd.Path, match, namePID, maxSessions)
	if err != nil {
		raw.ReadError(sd.Path, err)
		raw.Finish(sd)
		return raw
	}
	if why := chosen.Doubt("session files", maxSessions); why != "" {
		raw.Problem(&ledger.Error{File: sd.Path, Msg: why})
	}
	if why := chosen.Stale("session files", maxSessions); why != "" {
		raw.Skip(sd.Path, why)
	}
	files := chosen.Names
	for _, n := range files {
		file := filepath.Join(sd.Path, n)
		b, err := sd.Read(n)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // its session ended while the dir was read
		case errors.Is(err, platform.ErrNotRegular):
			continue // a directory the pattern matches is no session file
		case err != nil:
			raw.ReadError(file, err)
			continue
		}
		s, why := a.session(n, b)
		if why != "" {
			raw.Problem(&ledger.Error{File: file, Msg: fmt.Sprintf("not a session file of %s: %s", a.Spec.Name, why)})
			continue
		}
		s.File = file
		raw.Sessions = append(raw.Sessions, s)
	}
	raw.Finish(sd)
	return raw
}

// session reads one file named name, or says why it is not a session
// file: a JSON object with the pid (or a name that begins with it), the
// id, and, where the policy names one, its start.
func (a Adapter) session(name string, b []byte) (Session, string) {
	var s Session
	var obj map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&obj); err != nil || obj == nil {
		return s, "not a JSON object"
	}
	if a.Spec.PIDFromName {
		pid := leadingPID(name)
		if pid <= 0 {
			return s, "its name does not begin with a pid"
		}
		s.PID = pid
	} else {
		pid, ok := pidOf(obj[a.Spec.PID])
		if !ok {
			return s, fmt.Sprintf("no pid in %q", a.Spec.PID)
		}
		s.PID = pid
	}
	switch id := obj[a.Spec.ID].(type) {
	case string:
		s.ID = id
	case float64:
		s.ID = strconv.FormatFloat(id, 'f', -1, 64)
	}
	if s.ID == "" {
		return s, fmt.Sprintf("no id in %q", a.Spec.ID)
	}
	if why := statedir.CheckID(a.Spec.ID, s.ID); why != "" {
		return s, why
	}
	if a.Spec.Started != "" {
		ms, ok := millis(obj[a.Spec.Started])
		if !ok {
			return s, fmt.Sprintf("%q is not a time (milliseconds or seconds since the epoch, or RFC 3339)", a.Spec.Started)
		}
		s.Started = ms
	}
	return s, ""
}

// leadingPID is the pid a file's name begins with, 0 when none.
func leadingPID(name string) int {
	digits := 0
	for digits < len(name) && digits < 10 && name[digits] >= '0' && name[digits] <= '9' {
		digits++
	}
	pid, ok := pidOf(name[:digits])
	if !ok {
		return 0
	}
	return pid
}

// millis reads a start time: a number of milliseconds since the epoch, or
// of seconds (a number below 1e11, before 1973 in milliseconds), or an
// RFC 3339 string. A missing key is no time: 0, and fine.
func millis(v any) (int64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, true
	case float64:
		switch {
		case x <= 0 || x > 1e14:
			return 0, false
		case x < 1e11:
			return int64(x * 1000), true
		}
		return int64(x), true
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil || t.Unix() <= 0 {
			return 0, false
		}
		return t.UnixMilli(), true
	}
	return 0, false
}

package copilot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// EnvSession is the variable copilot sets on what it spawns: its
// session's id, the name of the session's dir in session-state.
const EnvSession = "COPILOT_AGENT_SESSION_ID"

// stateDir is where copilot keeps a dir per session (1.0.102: its
// workspace.yaml, checkpoints, and inuse.<pid>.lock while a process has
// the session open). A session's dirs are kept after it ends.
const stateDir = "session-state"

// The bounds of the lock read: the names listed in session-state, the
// sessions whose dirs are listed (the newest by their dir's change, a
// lock being made there when a process opens one), and the names of one.
const (
	maxStateNames   = 4096
	maxSessionsRead = 64
	maxSessionNames = 256
)

// lockName is a session's lock as copilot names it: its pid.
var lockName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^inuse\.([1-9][0-9]{0,9})\.lock$`) })

// Lock is a session's inuse lock: the native copilot that opened the
// session, by pid, which the file holds too ("11605\n", 1.0.102). It
// records no start time, and copilot leaves it when it is SIGKILLed.
type Lock struct {
	File    string `json:"file"`
	Session string `json:"session"`
	PID     int    `json:"pid"`
}

// readLocks reads the locks of the newest sessions: those with exactly
// one lock (a resumed session may hold a dead process's lock beside the
// live one's: which process a server is of is then not known). The lock
// proves a client gone and nothing else, so what cannot be read is said
// (skipped) and casts no doubt.
func (raw *Raw) readLocks(sd statedir.Dir) {
	dir := filepath.Join(sd.Path, stateDir)
	names, err := platform.DirNames(dir, maxStateNames)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		raw.Skip(dir, "not read: "+err.Error())
		return
	case len(names) == maxStateNames:
		raw.Skip(dir, fmt.Sprintf("more than %d entries: only some sessions' locks read", maxStateNames-1))
	}
	type session struct {
		name string
		at   int64
	}
	var sessions []session
	for _, n := range names {
		if strings.HasPrefix(n, ".") || statedir.CheckID("session", n) != "" {
			continue
		}
		// Lstat: a link is no session dir of the owner's.
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil && fi.IsDir() {
			sessions = append(sessions, session{n, fi.ModTime().UnixNano()})
		}
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].at > sessions[j].at })
	if len(sessions) > maxSessionsRead {
		sessions = sessions[:maxSessionsRead]
	}
	for _, s := range sessions {
		entries, err := platform.DirNames(filepath.Join(dir, s.name), maxSessionNames)
		if err != nil {
			continue
		}
		var locks []string
		for _, e := range entries {
			if lockName().MatchString(e) {
				locks = append(locks, e)
			}
		}
		if len(locks) != 1 {
			continue
		}
		rel := filepath.Join(stateDir, s.name, locks[0])
		file := filepath.Join(sd.Path, rel)
		b, err := sd.Read(rel)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // its session ended while it was read
				raw.Skip(file, "not read: "+ledger.ReadError(file, err).Error())
			}
			continue
		}
		pid, _ := strconv.Atoi(lockName().FindStringSubmatch(locks[0])[1])
		if strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
			raw.Skip(file, fmt.Sprintf("not a copilot lock: its name says pid %d, it holds %.20q", pid, b))
			continue
		}
		raw.Locks = append(raw.Locks, Lock{File: file, Session: s.name, PID: pid})
	}
}

// lockTies are the ties of the locks whose process is gone: the trees
// that carry the session's id are that dead copilot's. Gone is
// scan.OwnerGone's word: no process at the pid, or another user's. A lock
// whose pid a process of its user (or root's) holds proves nothing — it
// has no start time to tell copilot from a later process — so it ties
// nothing, and the trees are left to the other proofs
// (COPILOT_LOADER_PID, the stdin peer). Without a table (snap nil)
// nothing is known gone.
func lockTies(locks []Lock, uid uint32, snap *platform.Snapshot) []scan.Tie {
	if snap == nil {
		return nil
	}
	var ties []scan.Tie
	for _, l := range locks {
		if gone, _ := scan.OwnerGone(snap, scan.RecordedBy(uid, l.PID, "")); !gone {
			continue
		}
		ties = append(ties, scan.Tie{Env: EnvSession, Value: l.Session, Strong: EnvSession,
			Owner: ledger.Owner{Name: OwnerName, PID: l.PID}, Speaker: uid,
			Where: "copilot session " + l.Session, Proof: "the session's lock " + l.File, Noun: "copilot"})
	}
	return ties
}

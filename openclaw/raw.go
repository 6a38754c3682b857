package openclaw

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Raw is what one state dir's files say, read and bounded but not yet
// judged: plain data that survives a round trip through JSON. As root a
// user's state dir is read in a child process running as that user, which
// prints its Raw; the parent judges it (Raw.State) as the word of the uid
// it ran the child as — nothing in Raw says whose it is.
type Raw struct {
	Dir string `json:"dir"`
	// UID is the dir's owner as its reader saw it (the parent does not
	// take it from the child: it knows whom it ran the child as).
	UID uint32 `json:"uid"`
	// Missing: the dir could not be read at all; Problems say why.
	Missing  bool        `json:"missing,omitempty"`
	Instance string      `json:"instance,omitempty"`
	Lock     *Lock       `json:"lock,omitempty"` // the newest gateway lock
	Leases   []lease     `json:"leases,omitempty"`
	Tasks    *Tasks      `json:"tasks,omitempty"` // nil: no state store
	Servers  []MCPServer `json:"servers,omitempty"`
	// Problems are files that exist and could not be read or parsed: what
	// they would have said is missing, so the dir's owner's trees are in
	// doubt. Skipped are files of another owner, or in a directory of
	// another owner, which are not the owner's word and were not read:
	// reported, never doubt.
	Problems []Problem `json:"problems,omitempty"`
	Skipped  []string  `json:"skipped,omitempty"`
	// ConfigProblem is an openclaw.json that could not be read: it only
	// classifies, so it casts no doubt.
	ConfigProblem string `json:"config_problem,omitempty"`
}

// Problem is a file that could not be read, as plain data: the file, the
// line where known, what was wrong, and Cause when it could not be opened
// at all (one of causes' keys).
type Problem struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Msg   string `json:"msg"`
	Cause string `json:"cause,omitempty"`
}

// causes name the errors a file that could not be opened carries, so that
// a problem that crossed a process boundary is still told from one that
// was read and is wrong (exit 66 against 78).
var causes = map[string]error{
	"not-exist":   fs.ErrNotExist,
	"permission":  fs.ErrPermission,
	"not-regular": platform.ErrNotRegular,
	"symlink":     platform.ErrSymlink,
	"not-owner":   platform.ErrNotOwner,
}

// Errors are the problems as errors (*ledger.Error), each with its cause.
func (raw *Raw) Errors() []error {
	var out []error
	for _, p := range raw.Problems {
		e := &ledger.Error{File: p.File, Line: p.Line, Msg: p.Msg}
		if c, ok := causes[p.Cause]; ok {
			e.Err = c
		}
		out = append(out, e)
	}
	return out
}

// problem records err, a *ledger.Error or any error.
func (raw *Raw) problem(err error) {
	var le *ledger.Error
	if !errors.As(err, &le) {
		le = &ledger.Error{Msg: err.Error()}
	}
	p := Problem{File: le.File, Line: le.Line, Msg: le.Msg}
	for name, c := range causes {
		if errors.Is(err, c) {
			p.Cause = name
		}
	}
	raw.Problems = append(raw.Problems, p)
}

// readError records a file that could not be read: skipped when it is
// another user's (not this user's word), a problem otherwise.
func (raw *Raw) readError(path string, err error) {
	if errors.Is(err, platform.ErrNotOwner) {
		raw.skip(path, "not the state's user's file: not read")
		return
	}
	raw.problem(ledger.ReadError(path, err))
}

// maxSkipped bounds the skipped files listed for one dir.
const maxSkipped = 16

func (raw *Raw) skip(path, why string) {
	if len(raw.Skipped) < maxSkipped {
		raw.Skipped = append(raw.Skipped, path+": "+why)
	}
}

// ReadRaw reads the state dir's files: the instance id, the gateway locks,
// the lease files, the state store with the codex rows and the session
// stores, and the config's MCP servers. It reads what the calling process
// may read; as root that is the child running as the dir's owner.
func ReadRaw(dir string) *Raw { return readRaw(filepath.Clean(dir), true) }

func readRaw(dir string, servers bool) *Raw {
	raw := &Raw{Dir: dir}
	sd, err := openStateDir(dir)
	if err != nil {
		raw.Missing = true
		raw.problem(err)
		return raw
	}
	raw.UID = uint32(sd.owner)
	if b, err := sd.read("gateway-instance-id"); err == nil {
		raw.Instance = strings.TrimSpace(string(b))
	}
	raw.Lock = raw.readLocks(sd)
	for _, rel := range []string{filepath.Join("acpx", "process-leases.json"), "process-leases.json"} {
		p := filepath.Join(dir, rel)
		b, err := sd.read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			raw.readError(p, err)
			continue
		}
		ls, err := parseLeaseFile(p, b)
		if err != nil {
			raw.problem(err)
			continue
		}
		raw.Leases = append(raw.Leases, ls...)
	}
	dbRel := filepath.Join("state", "openclaw.sqlite")
	switch rows, err := readStore(dir, dbRel, sd.owner); {
	case errors.Is(err, fs.ErrNotExist):
	case rows == nil && errors.Is(err, platform.ErrNotOwner):
		raw.skip(filepath.Join(dir, dbRel), "not the state's user's file: not read")
	case rows == nil:
		raw.problem(err)
	default:
		if err != nil {
			raw.problem(err)
		}
		raw.Leases = append(raw.Leases, rows.leases...)
		raw.Tasks = rows.tasks
		var sessErrs []error
		raw.Tasks.Sessions, sessErrs = readSessions(sd)
		for _, e := range sessErrs {
			raw.problem(e)
		}
	}
	if servers {
		srv, err := ReadMCPServers(dir)
		if err != nil {
			raw.ConfigProblem = err.Error()
		}
		raw.Servers = srv
	}
	if !sd.unchanged() {
		// Renamed away or replaced while it was read: what it holds is not
		// known, and its owner's trees are in doubt.
		raw.Missing = true
		raw.problem(&ledger.Error{File: dir, Msg: "replaced or removed while it was read: not used"})
	}
	return raw
}

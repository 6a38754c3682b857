package openclaw

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
)

// Raw is what one state dir's files say, read and bounded but not yet
// judged: plain data that survives a round trip through JSON. As root a
// user's state dir is read in a child process running as that user, which
// prints its Raw; the parent judges it (Raw.State) as the word of the uid
// it ran the child as — nothing in Raw says whose it is.
type Raw struct {
	// Head is the dir, its owner as the reader saw it, whether it could be
	// read, what could not be read (Problems: the owner's doubt) and what
	// was not read (Skipped: another owner's files).
	statedir.Head
	Instance string      `json:"instance,omitempty"`
	Lock     *Lock       `json:"lock,omitempty"` // the newest gateway lock
	Leases   []lease     `json:"leases,omitempty"`
	Tasks    *Tasks      `json:"tasks,omitempty"` // nil: no state store
	Servers  []MCPServer `json:"servers,omitempty"`
	// ConfigProblem is an openclaw.json that could not be read: it only
	// classifies, so it casts no doubt.
	ConfigProblem string `json:"config_problem,omitempty"`
}

// ReadRaw reads the state dir's files: the instance id, the gateway locks,
// the lease files, the state store with the codex rows and the session
// stores, and the config's MCP servers. It reads what the calling process
// may read; as root that is the child running as the dir's owner.
func ReadRaw(dir string) *Raw { return readRaw(filepath.Clean(dir), true) }

func readRaw(dir string, servers bool) *Raw {
	head, sd, ok := statedir.Start(dir)
	raw := &Raw{Head: head}
	if !ok {
		return raw
	}
	if b, err := sd.Read("gateway-instance-id"); err == nil {
		raw.Instance = strings.TrimSpace(string(b))
	}
	raw.Lock = raw.readLocks(sd)
	for _, rel := range []string{filepath.Join("acpx", "process-leases.json"), "process-leases.json"} {
		p := filepath.Join(dir, rel)
		b, err := sd.Read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			raw.ReadError(p, err)
			continue
		}
		ls, err := parseLeaseFile(p, b)
		if err != nil {
			raw.Problem(err)
			continue
		}
		raw.Leases = append(raw.Leases, ls...)
	}
	dbRel := filepath.Join("state", "openclaw.sqlite")
	switch rows, err := readStore(dir, dbRel, sd.Owner); {
	case errors.Is(err, fs.ErrNotExist):
	case rows == nil && errors.Is(err, platform.ErrNotOwner):
		raw.Skip(filepath.Join(dir, dbRel), "not the state's user's file: not read")
	case rows == nil:
		raw.Problem(err)
	default:
		if err != nil {
			raw.Problem(err)
		}
		raw.Leases = append(raw.Leases, rows.leases...)
		raw.Tasks = rows.tasks
		var sessErrs []error
		raw.Tasks.Sessions, sessErrs = readSessions(sd)
		for _, e := range sessErrs {
			raw.Problem(e)
		}
	}
	if servers {
		srv, err := ReadMCPServers(dir)
		if err != nil {
			raw.ConfigProblem = err.Error()
		}
		raw.Servers = srv
	}
	raw.Finish(sd)
	return raw
}

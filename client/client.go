package client

import (
	"github.com/orphanreaper/reaper/claudecode"
	"github.com/orphanreaper/reaper/codex"
	"github.com/orphanreaper/reaper/gemini"
	"github.com/orphanreaper/reaper/openclaw"
	"github.com/orphanreaper/reaper/opencode"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Client is one agent client's adapter.
type Client interface {
	// Name names the client in messages and in the reader's protocol: a
	// short word without ':' (openclaw).
	Name() string
	// HomeDirs lists the client's state dirs in one account's home that
	// exist and are that account's (uid).
	HomeDirs(home string, uid int) []string
	// OwnDirs lists the state dirs reaper's own environment names (getenv
	// reads it). NamedDir is the state dir a process's environment names
	// (env looks a variable up), and the variable it came from: read from
	// the live owners, the processes IsOwner recognises by their comm, and
	// the roots of orphaned trees (a dead owner's survivors lead to its
	// state). gather checks every such dir before it is read.
	OwnDirs(getenv func(string) string) []string
	NamedDir(env func(string) (string, bool)) (dir, from string)
	IsOwner(comm string) bool
	// EnvNames are the variables scan must be able to look up on processes
	// (its markers).
	EnvNames() []string
	// IsStateDir reports whether a directory an operator names is this
	// client's state.
	IsStateDir(dir string) bool
	// Read reads one state dir — in the reader child, as the dir's owner,
	// under the kernel's limits — and returns plain data that survives a
	// round trip through JSON. It must not fail: what could not be read is
	// in the data, for Judge.
	Read(dir string) any
	// Decode decodes what Read returned for dir, as JSON, as the read of
	// uid — whom the reader ran as, never what the data says of itself. It
	// needs no table: it runs as soon as a reader's output is in, while the
	// table is still scanned.
	Decode(raw []byte, dir string, uid uint32) any
	// Judge turns what Decode returned into evidence spoken by uid, judged
	// against snap (nil: no table; what needs one is left out). problems
	// cast doubt on uid's trees; warnings do not.
	Judge(decoded any, dir string, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string)
	// Marks are the kinds and supervisors the client's processes show.
	Marks() scan.Marks
	// Owners are the owner names its evidence attributes findings to, for
	// a policy rule's owner matcher.
	Owners() []string
}

// all is every client reaper knows: an adapter is one package and one line
// here.
var all = []Client{
	openclaw.Client{},
	claudecode.Client{},
	codex.Client{},
	gemini.Client{},
	opencode.Client{},
}

// All returns the clients, in a fixed order.
func All() []Client { return all }

// ByName returns the client called name, or nil.
func ByName(name string) Client {
	for _, c := range all {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// Marks are every client's marks, for scan.Config.
func Marks() scan.Marks {
	var m scan.Marks
	for _, c := range all {
		cm := c.Marks()
		m.Env = append(m.Env, cm.Env...)
		m.Commands = append(m.Commands, cm.Commands...)
		m.Supervisors = append(m.Supervisors, cm.Supervisors...)
		m.Leaders = append(m.Leaders, cm.Leaders...)
	}
	return m
}

// EnvNames are every client's marker variables.
func EnvNames() []string {
	var out []string
	for _, c := range all {
		out = append(out, c.EnvNames()...)
	}
	return out
}

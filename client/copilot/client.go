package copilot

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner Copilot CLI's marks attribute findings to.
const OwnerName = "copilot-cli"

// EnvPID is the variable the native copilot sets on what it spawns: its
// own pid (not the npm loader's, whatever its name says).
const EnvPID = "COPILOT_LOADER_PID"

// EnvHome names copilot's state dir in place of ~/.copilot.
const EnvHome = "COPILOT_HOME"

// Adapter is Copilot CLI's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var _ client.Adapter[Raw] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[Raw](Adapter{})

// Raw is what one ~/.copilot says: its MCP servers, and its sessions'
// locks (locks.go).
type Raw struct {
	statedir.Config
	Locks []Lock `json:"locks,omitempty"`
}

// Info: Copilot CLI's marker and the owner name it attributes findings
// to.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Copilot CLI", RemoteServer: "`\"NAME\": {\"type\": \"http\", \"url\": \"URL\"}` in ~/.copilot/mcp-config.json", Homes: []string{"~/.copilot"}, EnvNames: append([]string{EnvPID, EnvSession, EnvHome}, statedir.HomeVars...),
		Owners: []string{OwnerName}, Marks: marks}
}

// HomeDirs lists ~/.copilot when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string {
	return statedir.HomeDir(home, ".copilot", uid)
}

// OwnDirs: none beyond the home's.
func (Adapter) OwnDirs(func(string) string) []string { return nil }

// NamedDir: a process's COPILOT_HOME (copilot's state dir, as
// 1.0.102 resolves it: its config dir, else COPILOT_HOME, else the home's
// .copilot), or the .copilot of its HOME (a home that is not the
// account's, as in a container or a test).
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	if dir, ok := env(EnvHome); ok && strings.TrimSpace(dir) != "" {
		return strings.TrimSpace(dir), EnvHome
	}
	if home, ok := statedir.ProcessHome(env); ok {
		return filepath.Join(home, ".copilot"), client.FromHome
	}
	return "", ""
}

// IsStateDir reports whether dir is a Copilot CLI dir.
func (Adapter) IsStateDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "mcp-config.json"))
	return err == nil && filepath.Base(dir) == ".copilot"
}

// cli matches the npm loader and the native binary: an agent CLI, kind
// acp.
var cli = scan.MustPattern(`(^|/)copilot( |$)|/@github/copilot(-[a-z0-9-]+)?/`)

// marks: the CLI's own processes are acp; COPILOT_LOADER_PID on what the
// native copilot spawned proves its session over when it is gone.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvPID, Owner: OwnerName}},
}

// Read reads mcp-config.json's MCP servers that run a command and the
// sessions' locks, as the dir's owner.
func (Adapter) Read(dir string) *Raw {
	raw := &Raw{Config: *statedir.ReadServers(dir, "mcp-config.json", "mcpServers", "Copilot CLI MCP config")}
	if raw.Missing {
		return raw
	}
	sd, err := statedir.Open(raw.Dir)
	if err != nil {
		raw.Missing = true
		raw.Problem(err)
		return raw
	}
	raw.readLocks(sd)
	raw.Finish(sd)
	return raw
}

// Judge: the config's servers, and the ties of the locks whose copilot is
// gone, spoken by uid.
func (Adapter) Judge(raw *Raw, uid uint32, snap *platform.Snapshot) (scan.Evidence, []error, []string) {
	ev, problems, warnings := statedir.JudgeConfig(&raw.Config, uid)
	ev.Ties = lockTies(raw.Locks, uid, snap)
	for _, l := range raw.Locks {
		ev.Sessions = append(ev.Sessions, scan.Session{Owner: ledger.Owner{Name: OwnerName, PID: l.PID}, ID: l.Session,
			Proof: "the session's lock " + l.File, Speaker: uid})
	}
	return ev, problems, warnings
}

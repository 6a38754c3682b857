package copilot

import (
	"os"
	"path/filepath"
	"regexp"

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

// Adapter is Copilot CLI's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var _ client.Adapter[statedir.Config] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter{})

// Info: Copilot CLI's marker and the owner name it attributes findings
// to.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Copilot CLI", EnvNames: []string{EnvPID},
		Owners: []string{OwnerName}, Marks: marks}
}

// HomeDirs lists ~/.copilot when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string {
	return statedir.HomeDir(home, ".copilot", uid)
}

// OwnDirs: none beyond the home's.
func (Adapter) OwnDirs(func(string) string) []string { return nil }

// NamedDir: no variable names Copilot CLI's dir.
func (Adapter) NamedDir(func(string) (string, bool)) (string, string) { return "", "" }

// IsStateDir reports whether dir is a Copilot CLI dir.
func (Adapter) IsStateDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "mcp-config.json"))
	return err == nil && filepath.Base(dir) == ".copilot"
}

// cli matches the npm loader and the native binary: an agent CLI, kind
// acp.
var cli = regexp.MustCompile(`(^|/)copilot( |$)|/@github/copilot(-[a-z0-9-]+)?/`)

// marks: the CLI's own processes are acp; COPILOT_LOADER_PID on what the
// native copilot spawned proves its session over when it is gone.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvPID, Owner: OwnerName}},
}

// Read reads mcp-config.json's MCP servers that run a command, as the
// dir's owner.
func (Adapter) Read(dir string) *statedir.Config {
	return statedir.ReadServers(dir, "mcp-config.json", "mcpServers", "Copilot CLI MCP config")
}

// Judge: the config's servers, spoken by uid.
func (Adapter) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

package qwen

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

// OwnerName is the owner Qwen Code's marks attribute findings to.
const OwnerName = "qwen-code"

// The variables Qwen Code sets on what it spawns.
const (
	EnvLauncher = "QWEN_CODE_LAUNCHER_PID"
	EnvRelaunch = "QWEN_CODE_NO_RELAUNCH"
)

// Adapter is Qwen Code's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var _ client.Adapter[statedir.Config] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter{})

// Info: Qwen Code runs as node, so no comm of its names its dir; its
// markers and the owner name they attribute findings to.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Qwen Code", Homes: []string{"~/.qwen"}, EnvNames: []string{EnvLauncher, EnvRelaunch},
		Owners: []string{OwnerName}, Marks: marks}
}

// HomeDirs lists ~/.qwen when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, ".qwen", uid) }

// OwnDirs: none beyond the home's.
func (Adapter) OwnDirs(func(string) string) []string { return nil }

// NamedDir: no variable names Qwen Code's dir.
func (Adapter) NamedDir(func(string) (string, bool)) (string, string) { return "", "" }

// IsStateDir reports whether dir is a Qwen Code dir.
func (Adapter) IsStateDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "settings.json"))
	return err == nil && filepath.Base(dir) == ".qwen"
}

// cli matches the qwen command node runs (the package's bin, or its
// entry point): an agent CLI, kind acp.
var cli = regexp.MustCompile(`(^|/)qwen( |$)|/@qwen-code/qwen-code/`)

// marks: the CLI's own processes are acp; the launcher's pid on what it
// spawned proves the session over when the launcher is gone.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvLauncher, Owner: OwnerName}},
}

// Read reads settings.json's stdio MCP servers, as the dir's owner.
func (Adapter) Read(dir string) *statedir.Config {
	return statedir.ReadServers(dir, "settings.json", "mcpServers", "Qwen Code settings")
}

// Judge: the settings' servers, spoken by uid.
func (Adapter) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

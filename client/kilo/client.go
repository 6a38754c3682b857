package kilo

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

// OwnerName is the owner Kilo's marks attribute findings to.
const OwnerName = "kilo"

// EnvPID is the variable .kilo sets on what it spawns: its own pid.
const EnvPID = "KILO_PID"

// configFiles are the names Kilo reads its global config from.
var configFiles = []string{"kilo.jsonc", "kilo.json"}

// Adapter is Kilo's adapter; Client is it on the client seam (client/all
// lists it).
type Adapter struct{}

var _ client.Adapter[statedir.Config] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter{})

// Info: Kilo's marker and the owner name it attributes findings to.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Kilo", Homes: []string{"~/.config/kilo"}, EnvNames: []string{EnvPID},
		Owners: []string{OwnerName}, Marks: marks}
}

// HomeDirs lists ~/.config/kilo when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string {
	return statedir.HomeDir(home, filepath.Join(".config", "kilo"), uid)
}

// OwnDirs: $XDG_CONFIG_HOME/kilo.
func (Adapter) OwnDirs(getenv func(string) string) []string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return []string{filepath.Join(x, "kilo")}
	}
	return nil
}

// NamedDir: no variable names Kilo's dir.
func (Adapter) NamedDir(func(string) (string, bool)) (string, string) { return "", "" }

// IsStateDir reports whether dir is a Kilo config dir.
func (Adapter) IsStateDir(dir string) bool {
	for _, n := range configFiles {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// cli matches the node wrapper (the package's bin) and the native .kilo:
// an agent CLI, kind acp.
var cli = regexp.MustCompile(`(^|/)\.?kilo( |$)|/@kilocode/cli/`)

// marks: the CLI's own processes are acp; KILO_PID on what .kilo spawned
// proves its session over when .kilo is gone.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvPID, Owner: OwnerName}},
}

// Read reads kilo.json's local MCP servers (OpenCode's format), as the
// dir's owner.
func (Adapter) Read(dir string) *statedir.Config {
	return statedir.ReadArgvServers(dir, configFiles, "a Kilo config")
}

// Judge: the config's servers, spoken by uid.
func (Adapter) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

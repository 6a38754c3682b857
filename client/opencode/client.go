package opencode

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

// OwnerName is the owner OpenCode's marks attribute findings to.
const OwnerName = "opencode"

// The variables OpenCode sets on what it spawns, and those that move its
// config dir.
const (
	EnvPID       = "OPENCODE_PID"
	EnvConfigDir = "OPENCODE_CONFIG_DIR"
	envXDG       = "XDG_CONFIG_HOME"
)

// configFiles are the names OpenCode reads its global config from, in its
// order.
var configFiles = []string{"opencode.jsonc", "opencode.json", "config.json"}

// Adapter is OpenCode's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var _ client.Adapter[statedir.Config] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter{})

// Info: opencode's comm names its config dir wherever it runs; its
// markers and the owner name they attribute findings to.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "OpenCode", Homes: []string{"~/.config/opencode"}, EnvNames: []string{EnvPID, EnvConfigDir},
		Owners: []string{OwnerName}, Marks: marks, Comms: []string{"opencode"}}
}

// HomeDirs lists ~/.config/opencode when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string {
	return statedir.HomeDir(home, filepath.Join(".config", "opencode"), uid)
}

// OwnDirs: OPENCODE_CONFIG_DIR, or $XDG_CONFIG_HOME/opencode.
func (Adapter) OwnDirs(getenv func(string) string) []string {
	out := []string{getenv(EnvConfigDir)}
	if x := getenv(envXDG); x != "" {
		out = append(out, filepath.Join(x, "opencode"))
	}
	return out
}

// NamedDir: a process's OPENCODE_CONFIG_DIR.
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	dir, _ := env(EnvConfigDir)
	return dir, EnvConfigDir
}

// IsStateDir reports whether dir is an OpenCode config dir.
func (Adapter) IsStateDir(dir string) bool {
	for _, n := range configFiles {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// cli is the opencode binary: an agent CLI, kind acp.
var cli = regexp.MustCompile(`(^|/)opencode( |$)`)

// marks: opencode itself is acp; what carries OPENCODE_PID is its, by the
// process group it kept, and OPENCODE_PID names that group's leader.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvPID, Owner: OwnerName, PIDEnv: true}},
}

// Read reads the global config's local MCP servers, as the dir's owner.
func (Adapter) Read(dir string) *statedir.Config {
	return statedir.ReadArgvServers(dir, configFiles, "an OpenCode config")
}

// Judge: the config's servers, spoken by uid.
func (Adapter) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

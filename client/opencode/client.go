package opencode

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
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

// Adapter is OpenCode's adapter, a config-only client (opencode's comm
// names its config dir wherever it runs); Client is it on the client seam
// (client/all lists it).
var Adapter = configonly.Adapter{
	About: client.Info{Name: OwnerName, Title: "OpenCode", RemoteServer: "`\"mcp\": {\"NAME\": {\"type\": \"remote\", \"url\": \"URL\"}}` in opencode.json", EnvNames: []string{EnvPID, EnvConfigDir},
		Owners: []string{OwnerName}, Marks: marks, Comms: []string{"opencode"}},
	Home: filepath.Join(".config", "opencode"),
	// OPENCODE_CONFIG_DIR, or $XDG_CONFIG_HOME/opencode.
	Own: func(getenv func(string) string) []string {
		out := []string{getenv(EnvConfigDir)}
		if x := getenv(envXDG); x != "" {
			out = append(out, filepath.Join(x, "opencode"))
		}
		return out
	},
	// A process's OPENCODE_CONFIG_DIR.
	Named: func(env func(string) (string, bool)) (string, string) {
		dir, _ := env(EnvConfigDir)
		return dir, EnvConfigDir
	},
	Files: configFiles,
	ReadDir: func(dir string) *statedir.Config {
		return statedir.ReadArgvServers(dir, configFiles, "an OpenCode config")
	},
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

// cli is the opencode binary: an agent CLI, kind acp.
var cli = scan.MustPattern(`(^|/)opencode( |$)`)

// marks: opencode itself is acp; what carries OPENCODE_PID is its, by the
// process group it kept, and OPENCODE_PID names that group's leader.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvPID, Owner: OwnerName, PIDEnv: true}},
}

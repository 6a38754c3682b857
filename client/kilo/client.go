package kilo

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner Kilo's marks attribute findings to.
const OwnerName = "kilo"

// EnvPID is the variable .kilo sets on what it spawns: its own pid.
const EnvPID = "KILO_PID"

// configFiles are the names Kilo reads its global config from.
var configFiles = []string{"kilo.jsonc", "kilo.json"}

// Adapter is Kilo's adapter, a config-only client (no variable names its
// dir); Client is it on the client seam (client/all lists it).
var Adapter = configonly.Adapter{
	// Comms: the npm package's bin, a node script, is titled by its file
	// name (kilo); the native binary it starts is .kilo, and the
	// platform package's binary, run as itself, kilo too.
	About: client.Info{Name: OwnerName, Title: "Kilo", RemoteServer: "`\"mcp\": {\"NAME\": {\"type\": \"remote\", \"url\": \"URL\"}}` in kilo.json", EnvNames: []string{EnvPID},
		Owners: []string{OwnerName}, Marks: marks, Comms: []string{"kilo", ".kilo"}},
	Home: filepath.Join(".config", "kilo"),
	// $XDG_CONFIG_HOME/kilo.
	Own: func(getenv func(string) string) []string {
		if x := getenv("XDG_CONFIG_HOME"); x != "" {
			return []string{filepath.Join(x, "kilo")}
		}
		return nil
	},
	Files: configFiles,
	// kilo.json's local MCP servers, in OpenCode's format.
	ReadDir: func(dir string) *statedir.Config { return statedir.ReadArgvServers(dir, configFiles, "a Kilo config") },
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

// cli matches the node wrapper (the package's bin) and the native .kilo:
// an agent CLI, kind acp.
var cli = scan.MustPattern(`(^|/)\.?kilo( |$)|/@kilocode/cli/`)

// marks: the CLI's own processes are acp; KILO_PID on what .kilo spawned
// proves its session over when .kilo is gone.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvPID, Owner: OwnerName}},
}

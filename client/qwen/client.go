package qwen

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner Qwen Code's marks attribute findings to.
const OwnerName = "qwen-code"

// The variables Qwen Code sets on what it spawns.
const (
	EnvLauncher = "QWEN_CODE_LAUNCHER_PID"
	EnvRelaunch = "QWEN_CODE_NO_RELAUNCH"
	// EnvHome moves the dir itself (0.24.4's Storage.getGlobalQwenDir:
	// QWEN_HOME, else ~/.qwen, on every OS).
	EnvHome = "QWEN_HOME"
)

// Adapter is Qwen Code's adapter, a config-only client (Qwen Code runs as
// node, so no comm of its names its dir; QWEN_HOME does); Client is it on
// the client seam (client/all lists it).
var Adapter = configonly.Adapter{
	About: client.Info{Name: OwnerName, Title: "Qwen Code", RemoteServer: "`qwen mcp add --transport http NAME URL`", EnvNames: []string{EnvLauncher, EnvRelaunch, EnvHome},
		Owners: []string{OwnerName}, Marks: marks,
		// Its settings' hooks.SessionStart (0.24: the source is startup,
		// resume, clear or compact; "a|b" matches either; the timeout in
		// seconds).
		// Read as Gemini CLI's, of which it is a fork: JSON with comments.
		Hook: &client.Hook{Dir: "~/.qwen", File: "settings.json", Event: "SessionStart", Matcher: "startup|resume", Timeout: 5, JSONC: true, PickShell: true}},
	Home: ".qwen",
	// $QWEN_HOME, when reaper's environment sets it.
	Own: func(getenv func(string) string) []string {
		if h := getenv(EnvHome); filepath.IsAbs(h) {
			return []string{filepath.Clean(h)}
		}
		return nil
	},
	// A process's QWEN_HOME names its dir.
	Named: func(env func(string) (string, bool)) (string, string) {
		if h, ok := env(EnvHome); ok && filepath.IsAbs(h) {
			return filepath.Clean(h), EnvHome
		}
		return "", ""
	},
	Files: []string{"settings.json"}, Base: true,
	ReadDir: func(dir string) *statedir.Config {
		return statedir.ReadServers(dir, "settings.json", "mcpServers", "Qwen Code settings")
	},
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

// cli matches the qwen command node runs (the package's bin, or its
// entry point): an agent CLI, kind acp.
var cli = scan.MustPattern(`(^|/)qwen( |$)|/@qwen-code/qwen-code/`)

// marks: the CLI's own processes are acp; the launcher's pid on what it
// spawned proves the session over when the launcher is gone.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvLauncher, Owner: OwnerName}},
}

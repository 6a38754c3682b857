package gemini

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner Gemini CLI's marks attribute findings to.
const OwnerName = "gemini-cli"

// The variables Gemini CLI sets on what it spawns, and the one that moves
// its home.
const (
	EnvMarker   = "GEMINI_CLI"
	EnvRelaunch = "GEMINI_CLI_NO_RELAUNCH"
	EnvHome     = "GEMINI_CLI_HOME"
)

// Adapter is Gemini CLI's adapter, a config-only client (Gemini CLI runs
// as node, so no comm of its names its dir); Client is it on the client
// seam (client/all lists it).
var Adapter = configonly.Adapter{
	About: client.Info{Name: OwnerName, Title: "Gemini CLI", RemoteServer: "`gemini mcp add --transport http NAME URL`", EnvNames: []string{EnvMarker, EnvRelaunch, EnvHome},
		Owners: []string{OwnerName}, Marks: marks,
		// Its settings' hooks.SessionStart (0.61: the source is startup,
		// resume or clear, and a matcher other than "*" must equal it — no
		// pattern, whatever the settings schema says; the timeout is in
		// milliseconds). "*": every session start.
		// Its settings are JSON with comments (strip-json-comments):
		// comments and trailing commas are taken and kept.
		Hook: &client.Hook{HomeEnv: EnvHome, Dir: "~/.gemini", File: "settings.json", Event: "SessionStart",
			Matcher: "*", Timeout: 5000, JSONC: true}},
	Home: ".gemini",
	// $GEMINI_CLI_HOME/.gemini, when reaper's environment sets it.
	Own: func(getenv func(string) string) []string {
		if h := getenv(EnvHome); h != "" {
			return []string{filepath.Join(h, ".gemini")}
		}
		return nil
	},
	// A process's GEMINI_CLI_HOME names its .gemini.
	Named: func(env func(string) (string, bool)) (string, string) {
		if h, ok := env(EnvHome); ok && filepath.IsAbs(h) {
			return filepath.Join(h, ".gemini"), EnvHome
		}
		return "", ""
	},
	Files: []string{"settings.json"}, Base: true,
	ReadDir: func(dir string) *statedir.Config {
		return statedir.ReadServers(dir, "settings.json", "mcpServers", "Gemini CLI settings")
	},
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

// cli matches the gemini command node runs (the package's bin, or its
// dist entry point): an agent CLI, kind acp as claude and codex are.
var cli = scan.MustPattern(`(^|/)gemini( |$)|/@google/gemini-cli/`)

// marks: the CLI's own processes are acp; what carries its markers is its,
// by the process group it kept.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvMarker, Owner: OwnerName}, {Env: EnvRelaunch, Owner: OwnerName}},
}

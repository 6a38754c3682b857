package gemini

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

// OwnerName is the owner Gemini CLI's marks attribute findings to.
const OwnerName = "gemini-cli"

// The variables Gemini CLI sets on what it spawns, and the one that moves
// its home.
const (
	EnvMarker   = "GEMINI_CLI"
	EnvRelaunch = "GEMINI_CLI_NO_RELAUNCH"
	EnvHome     = "GEMINI_CLI_HOME"
)

// Adapter is Gemini CLI's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var _ client.Adapter[statedir.Config] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter{})

// Info: Gemini CLI runs as node, so no comm of its names its dir; its
// markers and the owner name they attribute findings to.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Gemini CLI", Homes: []string{"~/.gemini"}, EnvNames: []string{EnvMarker, EnvRelaunch, EnvHome},
		Owners: []string{OwnerName}, Marks: marks}
}

// HomeDirs lists ~/.gemini when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, ".gemini", uid) }

// OwnDirs: $GEMINI_CLI_HOME/.gemini, when reaper's environment sets it.
func (Adapter) OwnDirs(getenv func(string) string) []string {
	if h := getenv(EnvHome); h != "" {
		return []string{filepath.Join(h, ".gemini")}
	}
	return nil
}

// NamedDir: a process's GEMINI_CLI_HOME names its .gemini.
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	if h, ok := env(EnvHome); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".gemini"), EnvHome
	}
	return "", ""
}

// IsStateDir reports whether dir is a Gemini CLI dir.
func (Adapter) IsStateDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "settings.json"))
	return err == nil && filepath.Base(dir) == ".gemini"
}

// cli matches the gemini command node runs (the package's bin, or its
// dist entry point): an agent CLI, kind acp as claude and codex are.
var cli = regexp.MustCompile(`(^|/)gemini( |$)|/@google/gemini-cli/`)

// marks: the CLI's own processes are acp; what carries its markers is its,
// by the process group it kept.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvMarker, Owner: OwnerName}, {Env: EnvRelaunch, Owner: OwnerName}},
}

// Read reads settings.json's stdio MCP servers, as the dir's owner.
func (Adapter) Read(dir string) *statedir.Config {
	return statedir.ReadServers(dir, "settings.json", "mcpServers", "Gemini CLI settings")
}

// Judge: the settings' servers, spoken by uid.
func (Adapter) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

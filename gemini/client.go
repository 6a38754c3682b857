package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
	"github.com/orphanreaper/reaper/statedir"
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

// Client is Gemini CLI's adapter (package client lists it).
type Client struct{}

// Name names the client.
func (Client) Name() string { return OwnerName }

// HomeDirs lists ~/.gemini when it is the account's.
func (Client) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, ".gemini", uid) }

// OwnDirs: $GEMINI_CLI_HOME/.gemini, when reaper's environment sets it.
func (Client) OwnDirs(getenv func(string) string) []string {
	if h := getenv(EnvHome); h != "" {
		return []string{filepath.Join(h, ".gemini")}
	}
	return nil
}

// NamedDir: a process's GEMINI_CLI_HOME names its .gemini.
func (Client) NamedDir(env func(string) (string, bool)) (string, string) {
	if h, ok := env(EnvHome); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".gemini"), EnvHome
	}
	return "", ""
}

// IsOwner: Gemini CLI runs as node; its comm says nothing.
func (Client) IsOwner(string) bool { return false }

// EnvNames are the variables scan looks up.
func (Client) EnvNames() []string { return []string{EnvMarker, EnvRelaunch, EnvHome} }

// IsStateDir reports whether dir is a Gemini CLI dir.
func (Client) IsStateDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "settings.json"))
	return err == nil && filepath.Base(dir) == ".gemini"
}

// Owners are the names its marks use.
func (Client) Owners() []string { return []string{OwnerName} }

// cli matches the gemini command node runs (the package's bin, or its
// dist entry point): an agent CLI, kind acp as claude and codex are.
var cli = regexp.MustCompile(`(^|/)gemini( |$)|/@google/gemini-cli/`)

// Marks: the CLI's own processes are acp; what carries its markers is its,
// by the process group it kept.
func (Client) Marks() scan.Marks {
	return scan.Marks{
		Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP}},
		Leaders:  []scan.LeaderMark{{Env: EnvMarker, Owner: OwnerName}, {Env: EnvRelaunch, Owner: OwnerName}},
	}
}

// Read reads settings.json's stdio MCP servers, as the dir's owner.
func (Client) Read(dir string) any {
	head, sd, ok := statedir.Start(dir)
	raw := &statedir.Config{Head: head}
	if !ok {
		return raw
	}
	file := filepath.Join(sd.Path, "settings.json")
	if b := raw.ReadFile(sd, "settings.json"); b != nil {
		var cfg struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if line, err := statedir.UnmarshalJSON5(b, &cfg); err != nil {
			raw.ConfigProblems = append(raw.ConfigProblems, (&ledger.Error{File: file, Line: line, Msg: "not a Gemini CLI settings file: " + statedir.JSONProblem(err)}).Error())
		} else {
			raw.Servers, raw.ConfigProblems = statedir.StdioServers(file, "mcpServers", cfg.MCPServers)
		}
	}
	raw.Finish(sd)
	return raw
}

// Decode is the client's config as the reader read it.
func (Client) Decode(b []byte, dir string, uid uint32) any {
	return statedir.DecodeConfig(b, dir, uid, "Gemini CLI")
}

// Judge: the settings' servers, spoken by uid.
func (Client) Judge(v any, dir string, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(v, dir, uid, "Gemini CLI")
}

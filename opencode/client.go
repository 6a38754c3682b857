package opencode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
	"github.com/orphanreaper/reaper/statedir"
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

// Client is OpenCode's adapter (package client lists it).
type Client struct{}

// Name names the client.
func (Client) Name() string { return OwnerName }

// HomeDirs lists ~/.config/opencode when it is the account's.
func (Client) HomeDirs(home string, uid int) []string {
	return statedir.HomeDir(home, filepath.Join(".config", "opencode"), uid)
}

// OwnDirs: OPENCODE_CONFIG_DIR, or $XDG_CONFIG_HOME/opencode.
func (Client) OwnDirs(getenv func(string) string) []string {
	out := []string{getenv(EnvConfigDir)}
	if x := getenv(envXDG); x != "" {
		out = append(out, filepath.Join(x, "opencode"))
	}
	return out
}

// NamedDir: a process's OPENCODE_CONFIG_DIR.
func (Client) NamedDir(env func(string) (string, bool)) (string, string) {
	dir, _ := env(EnvConfigDir)
	return dir, EnvConfigDir
}

// IsOwner: opencode's comm names its config dir wherever it runs.
func (Client) IsOwner(comm string) bool { return comm == "opencode" }

// EnvNames are the variables scan looks up.
func (Client) EnvNames() []string { return []string{EnvPID, EnvConfigDir} }

// IsStateDir reports whether dir is an OpenCode config dir.
func (Client) IsStateDir(dir string) bool {
	for _, n := range configFiles {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// Owners are the names its marks use.
func (Client) Owners() []string { return []string{OwnerName} }

// cli is the opencode binary: an agent CLI, kind acp.
var cli = regexp.MustCompile(`(^|/)opencode( |$)`)

// Marks: opencode itself is acp; what carries OPENCODE_PID is its, by the
// process group it kept, and OPENCODE_PID names that group's leader.
func (Client) Marks() scan.Marks {
	return scan.Marks{
		Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP}},
		Leaders:  []scan.LeaderMark{{Env: EnvPID, Owner: OwnerName, PIDEnv: true}},
	}
}

// Read reads the global config's local MCP servers, as the dir's owner.
func (Client) Read(dir string) any {
	head, sd, ok := statedir.Start(dir)
	raw := &statedir.Config{Head: head}
	if !ok {
		return raw
	}
	for _, name := range configFiles {
		b := raw.ReadFile(sd, name)
		if b == nil {
			continue
		}
		srv, bad := parse(filepath.Join(sd.Path, name), b)
		raw.Servers, raw.ConfigProblems = append(raw.Servers, srv...), append(raw.ConfigProblems, bad...)
	}
	raw.Finish(sd)
	return raw
}

// parse reads a config's mcp entries of type local: each command is an
// argv, its first word the program.
func parse(file string, b []byte) (out []scan.Server, bad []string) {
	var cfg struct {
		MCP map[string]json.RawMessage `json:"mcp"`
	}
	if line, err := statedir.UnmarshalJSON5(b, &cfg); err != nil {
		return nil, []string{(&ledger.Error{File: file, Line: line, Msg: "not an OpenCode config: " + statedir.JSONProblem(err)}).Error()}
	}
	names, bad := statedir.ServerNames(file+": mcp", cfg.MCP)
	for _, n := range names {
		var s struct {
			Type    string   `json:"type"`
			Command []string `json:"command"`
		}
		if err := json.Unmarshal(cfg.MCP[n], &s); err != nil {
			bad = append(bad, fmt.Sprintf("%s: mcp.%s: want {type: \"local\", command: [string]}", file, statedir.KeyName(n)))
			continue
		}
		if s.Type != "local" || len(s.Command) == 0 || s.Command[0] == "" {
			continue
		}
		out = append(out, scan.Server{Name: n, Command: s.Command[0], Args: s.Command[1:], File: file})
	}
	return out, bad
}

// Decode is the client's config as the reader read it.
func (Client) Decode(b []byte, dir string, uid uint32) any {
	return statedir.DecodeConfig(b, dir, uid, "OpenCode")
}

// Judge: the config's servers, spoken by uid.
func (Client) Judge(v any, dir string, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(v, dir, uid, "OpenCode")
}

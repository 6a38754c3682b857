package statedir

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// Config is the Raw of a client whose state, to reaper, is its config: the
// stdio MCP servers it declares, and what of it could not be read (it
// only classifies, so those are warnings).
type Config struct {
	Head
	Servers        []scan.Server `json:"servers,omitempty"`
	ConfigProblems []string      `json:"config_problems,omitempty"`
}

// ReadFile reads the config file rel below d (d's owner's, as Dir.Read):
// nil when it does not exist, and nil with the problem noted when it
// could not be read — a config only classifies, so that is a warning.
func (c *Config) ReadFile(d Dir, rel string) []byte {
	b, err := d.Read(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		c.ConfigProblems = append(c.ConfigProblems, ledger.ReadError(filepath.Join(d.Path, rel), err).Error())
		return nil
	}
	return b
}

// Warnings are what the read says without casting doubt: files of
// another owner, not read, and what of the config could not be read.
func (c *Config) Warnings() []string {
	return append(append([]string{}, c.Skipped...), c.ConfigProblems...)
}

// ServersOf are the config's servers, spoken by uid.
func (c *Config) ServersOf(uid uint32) []scan.Server {
	for i := range c.Servers {
		c.Servers[i].UID = uid
	}
	return c.Servers
}

// JudgeConfig is the Judge of such a client: the config's servers, spoken
// by uid.
func JudgeConfig(c *Config, uid uint32) (ev scan.Evidence, problems []error, warnings []string) {
	ev.Servers = c.ServersOf(uid)
	return ev, c.Errors(), c.Warnings()
}

// ReadServers reads the stdio MCP servers of the JSON (or JSON5) file
// name in dir, below key ({key: {NAME: {command, args}}}), as the dir's
// owner: the read of a client whose config is that one file. title names
// the client in a problem ("not a Qwen Code settings file").
func ReadServers(dir, name, key, title string) *Config {
	head, sd, ok := Start(dir)
	raw := &Config{Head: head}
	if !ok {
		return raw
	}
	file := filepath.Join(sd.Path, name)
	if b := raw.ReadFile(sd, name); b != nil {
		var cfg map[string]json.RawMessage
		var servers map[string]json.RawMessage
		line, err := UnmarshalJSON5(b, &cfg)
		if err == nil && cfg[key] != nil {
			err = json.Unmarshal(cfg[key], &servers)
		}
		if err != nil {
			raw.ConfigProblems = append(raw.ConfigProblems, (&ledger.Error{File: file, Line: line, Msg: "not a " + title + " file: " + JSONProblem(err)}).Error())
		} else {
			raw.Servers, raw.ConfigProblems = StdioServers(file, key, servers)
		}
	}
	raw.Finish(sd)
	return raw
}

package statedir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// Head is what every adapter's Raw begins with: the dir read, its owner
// as the reader saw it, whether it could be read at all, and the report of
// what could not be read. An adapter's Raw embeds it.
type Head struct {
	Dir string `json:"dir"`
	// UID is the dir's owner as its reader saw it (the parent does not
	// take it from the child: it knows whom it ran the child as).
	UID uint32 `json:"uid"`
	// Missing: the dir could not be read at all (or was replaced while it
	// was read); Problems say why.
	Missing bool `json:"missing,omitempty"`
	Report
}

// Start opens dir for an adapter's Read: the Head to fill, and the Dir to
// read with. ok is false when there is nothing to read (Missing).
func Start(dir string) (Head, Dir, bool) {
	h := Head{Dir: filepath.Clean(dir)}
	sd, err := Open(h.Dir)
	if err != nil {
		h.Missing = true
		h.Problem(err)
		return h, sd, false
	}
	h.UID = uint32(sd.Owner)
	return h, sd, true
}

// StateHead returns h: a Raw that embeds a Head has it too, which is how
// the client port finds a read's head (client.Raw).
func (h *Head) StateHead() *Head { return h }

// Finish marks the read missing when the dir was renamed away or replaced
// while it was read: what it holds is not known, and its owner's trees are
// in doubt.
func (h *Head) Finish(sd Dir) {
	if !sd.Unchanged() {
		h.Missing = true
		h.Problem(&ledger.Error{File: h.Dir, Msg: "replaced or removed while it was read: not used"})
	}
}

// Decode is the first step of every adapter's Judge: b, what the reader
// printed for dir, into raw (whose Head is head), no value in it longer
// than MaxValue, then whether it can be judged as uid's word. It returns the problems that end the judging, or
// nil: a dir the reader could not read, or read as another uid's, says
// nothing, and its owner's trees are in doubt.
func Decode(b []byte, raw any, head *Head, dir string, uid uint32, client string) []error {
	if err := json.Unmarshal(b, raw); err != nil {
		return []error{fmt.Errorf("%s: the reader's output is not %s state: %w", dir, client, err)}
	}
	if err := checkValues(raw); err != nil {
		return []error{fmt.Errorf("%s: the reader's output holds %w", dir, err)}
	}
	switch {
	case head.Dir != dir:
		return []error{fmt.Errorf("%s: the reader returned %q", dir, head.Dir)}
	case head.Missing:
		if errs := head.Errors(); len(errs) > 0 {
			return errs
		}
		return []error{fmt.Errorf("%s: not read", dir)}
	case head.UID != uid:
		return []error{fmt.Errorf("%s: owned by uid %d when read, uid %d when listed: not used", dir, head.UID, uid)}
	}
	return nil
}

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

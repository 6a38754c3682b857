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

// Decoded is what an adapter's Decode makes of one dir's read: its Raw,
// or the problems (Errs) that keep it from being judged. Decoding needs no
// process table, so it runs as soon as a reader's output is in, while the
// table is still being scanned; only the judging waits for the table.
type Decoded[R any] struct {
	Raw  R
	Errs []error
}

// DecodeAs is Decode into a new R, whose Head head returns.
func DecodeAs[R any](b []byte, dir string, uid uint32, client string, head func(*R) *Head) *Decoded[R] {
	d := &Decoded[R]{}
	d.Errs = Decode(b, &d.Raw, head(&d.Raw), dir, uid, client)
	return d
}

// Judging is what an adapter's Judge is given, as the Decoded[R] its
// Decode returned; anything else (another adapter's) is an error.
func Judging[R any](v any, dir, client string) (*Decoded[R], error) {
	d, ok := v.(*Decoded[R])
	if !ok || d == nil {
		return nil, fmt.Errorf("%s: what was judged is not %s's read (%T)", dir, client, v)
	}
	return d, nil
}

// Judged is the Raw an adapter's Judge judges, the Decoded[R] its Decode
// returned; or, when there is none to judge (another adapter's value, or
// what Decode found wrong), nil and the problems and warnings (as
// warnings says them of the read) the Judge returns instead.
func Judged[R any](v any, dir, client string, warnings func(*R) []string) (*R, []error, []string) {
	d, err := Judging[R](v, dir, client)
	switch {
	case err != nil:
		return nil, []error{err}, nil
	case d.Errs != nil:
		return nil, d.Errs, warnings(&d.Raw)
	}
	return &d.Raw, nil, nil
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

// DecodeConfig is the Decode of such a client.
func DecodeConfig(b []byte, dir string, uid uint32, client string) any {
	return DecodeAs(b, dir, uid, client, func(c *Config) *Head { return &c.Head })
}

// JudgeConfig is the Judge of such a client: the config's servers, spoken
// by uid.
func JudgeConfig(v any, dir string, uid uint32, client string) (ev scan.Evidence, problems []error, warnings []string) {
	c, problems, warnings := Judged(v, dir, client, (*Config).Warnings)
	if c == nil {
		return ev, problems, warnings
	}
	ev.Servers = c.ServersOf(uid)
	return ev, c.Errors(), c.Warnings()
}

package statedir

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/orphanreaper/reaper/ledger"
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

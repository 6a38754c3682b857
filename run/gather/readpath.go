package gather

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// ReadPath reads one path the operator names: a v1 ledger file, or a
// client's state dir (as its owner, in a reader child, when root), and
// returns the ledgers it holds.
func ReadPath(ctx context.Context, path string, cs client.Set) ([]*ledger.Ledger, []error) {
	rd := newReaders(ctx, cs)
	ev, errs, _ := readPath(ctx, filepath.Clean(path), nil, &rd)
	return ev.Ledgers, errs
}

// readPath is ReadPath's evidence, judged against snap (nil: none), with
// the warnings of a state dir: its config, which only classifies, and
// files of another owner, which are not read.
func readPath(ctx context.Context, path string, snap *platform.Snapshot, rd *readers) (scan.Evidence, []error, []string) {
	var ev scan.Evidence
	fi, err := os.Stat(path)
	if err != nil {
		return ev, []error{&ledger.Error{File: path, Msg: "cannot be opened: " + errors.Unwrap(err).Error(), Err: err}}, nil
	}
	if !fi.IsDir() {
		l, err := ledger.ReadFile(path)
		if err != nil {
			return ev, []error{err}, nil
		}
		ev.Ledgers = []*ledger.Ledger{l}
		return ev, nil, nil
	}
	var c client.Client
	for _, k := range rd.clients.All() {
		if k.IsStateDir(path) {
			c = k
			break
		}
	}
	if c == nil {
		var names []string
		for _, k := range rd.clients.All() {
			names = append(names, k.Info().Name)
		}
		return ev, []error{&ledger.Error{File: path, Msg: fmt.Sprintf("a directory that is no known agent client's state dir (%s): name a ledger file", strings.Join(names, ", "))}}, nil
	}
	uid, _ := platform.FileUID(path, fi)
	r := readAll(ctx, []Dir{{Path: path, UID: uid, From: "the command line", Client: c.Info().Name}}, rd)[0]
	if r.err != nil {
		return ev, []error{&ledger.Error{File: path, Msg: r.err.Error()}}, nil
	}
	return r.read.Judge(snap)
}

// ExpandHome expands a leading ~/ to the home directory of the reaper.
func ExpandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return filepath.Clean(path)
}

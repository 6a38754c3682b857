package run

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/declared"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/run/gather"
)

// What the command line asks of the host, through run: cmd maps flags and
// errors and reads no process table, state or platform of its own.

// ChildCommand is the hidden first argument that makes the binary the
// reader child that reads one user's state as that user (gather).
const ChildCommand = gather.ChildCommand

// ChildMain is the reader child's main, knowing cs and the clients a
// policy declares; it returns the exit status.
func ChildMain(args []string, stdout, stderr io.Writer, cs client.Set) int {
	return gather.ChildMain(args, stdout, stderr, cs, declared.FromSpec)
}

// NoInput reports whether err says a file could not be opened at all —
// missing, unreadable, not a regular file, a link refused — rather than
// that it was read and is wrong.
func NoInput(err error) bool {
	for _, e := range []error{fs.ErrNotExist, fs.ErrPermission, platform.ErrNotRegular, platform.ErrSymlink, platform.ErrNotOwner} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Validated is what ledger validate found in one path: the ledgers it
// holds, or what is wrong with it (Unopened: it could not be opened at
// all, rather than read and found wrong).
type Validated struct {
	Path                    string
	Ledgers, Runs, Sessions int
	Errs                    []error
	Unopened                bool
}

// Validate reads each path as ledger validate does (ReadPath).
func Validate(ctx context.Context, paths []string, cs client.Set) []Validated {
	out := make([]Validated, len(paths))
	for i, path := range paths {
		ls, errs := readPath(ctx, path, cs)
		v := Validated{Path: path, Ledgers: len(ls), Errs: errs, Unopened: len(errs) == 1 && NoInput(errs[0])}
		for _, l := range ls {
			v.Runs += len(l.Runs)
			v.Sessions += len(l.Sessions)
		}
		out[i] = v
	}
	return out
}

// readPath reads one path the operator names — a v1 ledger file, or a
// client's state dir (as its owner, in a reader child, when root) — for
// ledger validate.
func readPath(ctx context.Context, path string, cs client.Set) ([]*ledger.Ledger, []error) {
	return gather.ReadPath(ctx, path, cs)
}

// PidfdSupported says whether this kernel gives pidfds, and pidfs (for
// reaper version).
func PidfdSupported() (pidfd, pidfs bool) { return kill.PidfdSupported() }

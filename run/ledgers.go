package run

import (
	"context"
	"errors"
	"io/fs"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/run/gather"
	"github.com/orphanreaper/reaper/scan"
)

// Ledgers shows what the ledgers and the clients' state map to now: with
// no paths, what a scan reads (the state dirs found, every user's as
// root, and the policy's [[owner]] ledgers); else the named ones alone.
// The problems are the state that could not be read.
func Ledgers(ctx context.Context, cfg Config, paths []string) (view *audit.LedgerView, problems []string, err error) {
	cfg.Ledgers, cfg.Discover, cfg.EveryUser = paths, len(paths) == 0, len(paths) == 0
	if len(paths) > 0 {
		// The policy's ledgers are not what was asked about.
		none := *cfg.Policy
		none.Owners = nil
		for _, o := range cfg.Policy.Owners {
			o.Ledger = nil
			none.Owners = append(none.Owners, o)
		}
		cfg.Policy = &none
	}
	t, err := Collect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer t.Close()
	s := t.Snap
	res := t.Result
	reasons := map[int][]string{}
	for _, f := range res.Findings {
		for _, m := range f.Members {
			for _, r := range f.Reasons {
				reasons[m.Proc.PID] = append(reasons[m.Proc.PID], string(r))
			}
		}
	}
	out := []audit.ShownLedger{}
	index := map[*ledger.Ledger]int{}
	for _, lr := range res.Ledger {
		k, ok := index[lr.Ledger]
		if !ok {
			gone, why := res.OwnerGone(lr.Ledger)
			status := "alive"
			if gone {
				status = "gone"
			} else if lr.Ledger.Owner.PID <= 0 {
				status = "unknown"
			}
			out = append(out, audit.ShownLedger{Source: lr.Ledger.Source, Owner: lr.Ledger.Owner, OwnerStatus: status,
				OwnerDetail: why, Sessions: lr.Ledger.Sessions})
			k = len(out) - 1
			index[lr.Ledger] = k
		}
		sr := audit.ShownRun{Run: *lr.Run, Status: string(lr.Status), Info: lr.Info, Detail: lr.Detail}
		if p := s.Get(lr.Run.PID); p != nil && (lr.Status == scan.StatusAlive || lr.Status == scan.StatusOrphaned) {
			sr.Cmdline = audit.CommandLine(s, p)
			if lr.Status == scan.StatusOrphaned {
				sr.Reasons = reasons[p.PID]
			}
		}
		out[k].Runs = append(out[k].Runs, sr)
	}
	view = &audit.LedgerView{Ledgers: out, SchemaVersion: 1, Discovered: len(paths) == 0}
	for _, d := range t.Dirs {
		view.StateDirs = append(view.StateDirs, audit.ShownDir{Client: d.Client, Path: d.Path, UID: d.UID, Error: d.Err})
	}
	return view, t.Problems, nil
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

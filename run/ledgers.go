package run

import (
	"context"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/ledger"
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

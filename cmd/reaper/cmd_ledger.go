package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"
	"github.com/orphanreaper/reaper/scan"
)

func newLedgerCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Validate supervisor ledgers and OpenClaw state, or show what they map to now",
		Long: `A ledger is what a supervisor (a gateway) writes about the processes it
started: its own pid and start identity, its sessions, and each run's pid,
start identity, session and state (format v1; the guide and schema are
/usr/share/doc/reaper/ledger-guide.md and ledger-schema.json from the
packages, ledger/GUIDE.md and ledger/schema.json in the source). reaper
also reads OpenClaw's own state dirs: gateway
lock files, ACP process leases and the state database.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newLedgerValidateCommand(g), newLedgerShowCommand(g))
	return cmd
}

func newLedgerValidateCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check ledger files or OpenClaw state dirs; exit 0 if all are valid, 78 if not",
		Long: `validate reads each PATH — a v1 ledger file or an OpenClaw state dir — and
reports what it holds, or every problem as FILE:LINE: message. It looks at
no process.`,
		Example: "  reaper ledger validate ~/.myapp/reaper-ledger.json ~/.openclaw",
		Args:    someArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLedgerValidate(args, g)
		},
	}
}

func runLedgerValidate(paths []string, g *globalOptions) error {
	invalid, unopened := 0, []error(nil)
	for _, path := range paths {
		ls, errs := gather.ReadPath(context.Background(), path, clients)
		for _, err := range errs {
			fmt.Fprintln(g.stderr, err)
		}
		if len(errs) == 1 && noInput(errs[0]) {
			unopened = append(unopened, errs[0])
			continue
		}
		if len(errs) > 0 {
			invalid++
			continue
		}
		runs, sessions := 0, 0
		for _, l := range ls {
			runs += len(l.Runs)
			sessions += len(l.Sessions)
		}
		fmt.Fprintf(g.stdout, "%s: valid: %s, %s, %s\n", path, countOf(len(ls), "ledger"), countOf(runs, "run"), countOf(sessions, "session"))
	}
	// As everywhere: 78 when something read is invalid, else 66 when a
	// path could not be opened at all (ledger show says the same).
	if invalid > 0 {
		return configError{fmt.Errorf("%d of %d paths are invalid", invalid, len(paths))}
	}
	if len(unopened) > 0 {
		return noInputError{fmt.Errorf("%d of %d paths could not be opened", len(unopened), len(paths))}
	}
	return nil
}

// ledgerShowOptions are the flags of `reaper ledger show`.
type ledgerShowOptions struct {
	policyFile string
	procRoot   string
	output     string
}

func newLedgerShowCommand(g *globalOptions) *cobra.Command {
	var opts ledgerShowOptions
	cmd := &cobra.Command{
		Use:   "show [PATH...]",
		Short: "Show the owners, runs and sessions of ledgers and what each maps to in the process table now",
		Long: `show reads each PATH (a v1 ledger file or an OpenClaw state dir), takes a
snapshot of the process table, and says for the owner whether it is alive,
and for each run whether its process is alive (and the same process: its
start identity matches), gone, pid-reused, orphaned (part of a finding) or
unverified (the run records no identity).

With no PATH it shows what scan reads: the agent clients' state dirs it
finds (every home's as root, each read as its owner) and the ledgers the
policy's [[owner]] entries name.`,
		Example: "  reaper ledger show\n  reaper ledger show ~/.openclaw\n  reaper ledger show --output json ./ledger.json",
		Args: func(cmd *cobra.Command, args []string) error {
			return validateOutput(&opts.output)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLedgerShow(cmd, args, &opts, g)
		},
	}
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "policy `FILE` (for owners and subreapers; default as for scan)")
	cmd.Flags().StringVar(&opts.procRoot, "proc", "", "read this `DIR` instead of /proc (Linux; fixtures)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runLedgerShow(cmd *cobra.Command, paths []string, opts *ledgerShowOptions, g *globalOptions) error {
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	var t *run.Table
	if len(paths) == 0 {
		t, err = collect(context.Background(), pol, opts.procRoot, nil, 0, true, true)
	} else {
		t, err = collectOnly(pol, opts.procRoot, paths)
	}
	if err != nil {
		return err
	}
	defer t.Snap.Close()
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
			sr.Cmdline = s.CommandLine(p)
			if lr.Status == scan.StatusOrphaned {
				sr.Reasons = reasons[p.PID]
			}
		}
		out[k].Runs = append(out[k].Runs, sr)
	}
	view := &audit.LedgerView{Ledgers: out, SchemaVersion: 1, Discovered: len(paths) == 0}
	for _, d := range t.Dirs {
		view.StateDirs = append(view.StateDirs, audit.ShownDir{Client: d.Client, Path: d.Path, UID: d.UID, Error: d.Err})
	}
	for _, p := range t.Problems {
		fmt.Fprintln(g.stderr, "reaper:", p)
	}
	return g.write(view, opts.output)
}

// collectOnly scans and applies only the named ledgers: show is about them.
func collectOnly(pol *policy.Policy, procRoot string, paths []string) (*run.Table, error) {
	none := *pol
	none.Owners = nil
	for _, o := range pol.Owners {
		o.Ledger = nil // the policy's ledgers are not what was asked about
		none.Owners = append(none.Owners, o)
	}
	return collect(context.Background(), &none, procRoot, paths, 0, false, false)
}

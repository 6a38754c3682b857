package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run"
)

func newLedgerCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Validate supervisor ledgers and OpenClaw state, or show what they map to now",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	g.help.Set(cmd, func() string { return docs.Help("ledger") })
	cmd.AddCommand(newLedgerValidateCommand(g), newLedgerShowCommand(g))
	return cmd
}

func newLedgerValidateCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "validate PATH...",
		Short:   "Check ledger files or OpenClaw state dirs; exit 0 if all are valid, 78 if not",
		Example: "  reaper ledger validate ~/.myapp/reaper-ledger.json ~/.openclaw",
		Args:    someArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLedgerValidate(args, g)
		},
	}
	return g.help.Set(cmd, func() string { return docs.Help("ledger-validate") })
}

func runLedgerValidate(paths []string, g *globalOptions) error {
	invalid, unopened := 0, 0
	for _, v := range run.Validate(context.Background(), paths, clients) {
		for _, err := range v.Errs {
			fmt.Fprintln(g.stderr, err)
		}
		switch {
		case v.Unopened:
			unopened++
		case len(v.Errs) > 0:
			invalid++
		default:
			fmt.Fprintf(g.stdout, "%s: valid: %s, %s, %s\n", v.Path, audit.Plural(v.Ledgers, "ledger"), audit.Plural(v.Runs, "run"), audit.Plural(v.Sessions, "session"))
		}
	}
	// As everywhere: 78 when something read is invalid, else 66 when a
	// path could not be opened at all (ledger show says the same).
	if invalid > 0 {
		return configError{fmt.Errorf("%d of %d paths are invalid", invalid, len(paths))}
	}
	if unopened > 0 {
		return noInputError{fmt.Errorf("%d of %d paths could not be opened", unopened, len(paths))}
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
		Use:     "show [PATH...]",
		Short:   "Show the owners, runs and sessions of ledgers and what each maps to in the process table now",
		Example: "  reaper ledger show\n  reaper ledger show ~/.openclaw\n  reaper ledger show --output json ./ledger.json",
		Args: func(cmd *cobra.Command, args []string) error {
			return validateOutput(&opts.output)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLedgerShow(cmd, args, &opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("ledger-show") })
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
	cfg := run.NewConfig(pol, clients)
	cfg.ProcRoot = opts.procRoot
	view, problems, err := run.Ledgers(context.Background(), cfg, paths)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(g.stderr, "reaper:", p)
	}
	return g.write(view, opts.output)
}

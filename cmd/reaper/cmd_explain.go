package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
)

func newExplainCommand(g *globalOptions) *cobra.Command {
	var opts scanOptions
	cmd := &cobra.Command{
		Use:   "explain PID",
		Short: "Say why one process is, or is not, in a finding, and what every rule makes of it",
		Example: `  reaper explain 4242
  reaper explain 4242 --policy ` + paths.SystemPolicy + ` -o json`,
		Args: oneArg("PID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, err := strconv.Atoi(args[0])
			if err != nil || pid <= 0 {
				return usagef("%q is not a process id", args[0])
			}
			return runExplain(cmd.Context(), pid, &opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("explain") })
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` (default: the one scan uses)")
	f.StringArrayVar(&opts.ledgers, "ledger", nil, "a ledger `PATH`, as scan takes it; repeatable")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	f.StringVar(&opts.procRoot, "proc", "", "read this `DIR` instead of /proc (Linux; fixtures)")
	f.DurationVar(&opts.timeout, "timeout", 0, "bound on the whole run (default 60s)")
	return cmd
}

func runExplain(ctx context.Context, pid int, opts *scanOptions, g *globalOptions) error {
	if err := validateOutput(&opts.output); err != nil {
		return err
	}
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	cfg := opts.config(pol, opts.timeout, false)
	cfg.EveryStdin = true // a person asks: who writes to every open stdin
	pass, err := run.Scan(ctx, cfg, policy.ModeScan)
	if err != nil {
		return err
	}
	defer pass.Close()
	e, err := view.Explain(pass, pid)
	if err != nil {
		return err
	}
	return g.write(e, opts.output)
}

package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
)

func newEvidenceCommand(g *globalOptions) *cobra.Command {
	var policyFile, output string
	cmd := &cobra.Command{
		Use:     "evidence PID|SESSION",
		Short:   "Print a redacted evidence bundle about a leftover, to attach to a client's bug report",
		Example: "  reaper evidence 48120\n  reaper evidence 9f2c1e7a-… -o json > evidence.json",
		Args:    oneArg("PID or SESSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(&output); err != nil {
				return err
			}
			pol, err := resolvePolicy(policyFile)
			if err != nil {
				return err
			}
			cfg := run.NewConfig(pol, clients)
			cfg.EveryStdin = true // a bug report shows who writes to every open stdin
			pass, err := run.Scan(context.Background(), cfg, policy.ModeScan)
			if err != nil {
				return err
			}
			defer pass.Close()
			ev, err := view.Bundle(pass, args[0], buildInfo())
			if err != nil {
				return err
			}
			return g.write(ev, output)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("evidence") })
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy `FILE` (default as for scan)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table (Markdown) or json")
	return cmd
}

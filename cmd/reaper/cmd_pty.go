package main

import (
	"context"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/policy"
)

// ptyOptions are the flags of `reaper pty`.
type ptyOptions struct {
	policyFile string
	output     string
}

func newPtyCommand(g *globalOptions) *cobra.Command {
	var opts ptyOptions
	cmd := &cobra.Command{
		Use:     "pty",
		Short:   "Report every pseudo-terminal in use: who holds it, and which are dead",
		Example: "  reaper pty\n  reaper pty --output json | jq '.dead'",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(&opts.output); err != nil {
				return err
			}
			return runPty(&opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("pty") })
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "policy `FILE` (to know which processes are findings; default as for scan)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runPty(opts *ptyOptions, g *globalOptions) error {
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	pass, err := run.Scan(context.Background(), run.NewConfig(pol, clients), policy.ModeScan)
	if err != nil {
		return err
	}
	defer pass.Close()
	return g.write(view.PTYs(pass), opts.output)
}

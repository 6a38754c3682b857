package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
)

// psOptions are the flags of `reaper ps`.
type psOptions struct {
	policyFile, output, sort string
}

func newPsCommand(g *globalOptions) *cobra.Command {
	var opts psOptions
	cmd := &cobra.Command{
		Use:     "ps",
		Short:   "List every agent session with its process tree and memory, then the orphans",
		Example: "  reaper ps\n  reaper ps --sort cpu\n  reaper ps -o json | jq '.sessions[] | {client, pid, memory_bytes}'",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(&opts.output); err != nil {
				return err
			}
			if !slices.Contains(audit.PSOrder, opts.sort) {
				return usagef("--sort %q: want %s", opts.sort, strings.Join(audit.PSOrder, ", "))
			}
			pol, err := resolvePolicy(opts.policyFile)
			if err != nil {
				return err
			}
			pass, err := run.Scan(context.Background(), run.NewConfig(pol, clients), policy.ModeScan)
			if err != nil {
				return err
			}
			defer pass.Close()
			v := view.PS(pass)
			v.Sort(opts.sort)
			return g.write(v, opts.output)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("ps") })
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "policy `FILE` (which trees are findings; default as for scan)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVar(&opts.sort, "sort", "memory", "order sessions and orphans by memory, cpu or age, largest first")
	return cmd
}

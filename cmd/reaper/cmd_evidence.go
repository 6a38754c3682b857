package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

func newEvidenceCommand(g *globalOptions) *cobra.Command {
	var policyFile, output string
	cmd := &cobra.Command{
		Use:   "evidence PID|SESSION",
		Short: "Print a redacted evidence bundle about a leftover, to attach to a client's bug report",
		Long: `evidence gathers what a bug report to an agent client's project needs to
show a leak: reaper's version and the kernel, the client and its version,
the session (by pid, or by a session id as reaper ps shows it) and its
tree with ages, memory and states, the leftover tree, reaper's evidence
lines and its story of the process (as reaper explain), and an excerpt of
the client's own record behind them.

It is redacted before it is printed: no environment values but the
markers reaper used, credentials (API keys, tokens, bearer headers, JWTs,
secret-named flags and variables, URL passwords) replaced by
[REDACTED], your home shortened to ~; the bundle ends by saying what it
took out. A record is excerpted only when it is your own file: as root, a
user's record is named with the command that reads it as that user.

The default output is Markdown, to paste into an issue; -o json is the
same bundle for a script (audit/evidence.schema.json). Read it before you
post it.`,
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
			pass, err := run.Scan(context.Background(), run.Config{Policy: pol, Clients: run.ClientsOf(clients, pol), Discover: true, EveryStdin: true}, policy.ModeScan)
			if err != nil {
				return err
			}
			defer pass.Close()
			ev, err := pass.Bundle(args[0], buildInfo())
			if err != nil {
				return err
			}
			return g.write(ev, output)
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy `FILE` (default as for scan)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table (Markdown) or json")
	return cmd
}

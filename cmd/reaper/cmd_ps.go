package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

// psOptions are the flags of `reaper ps`.
type psOptions struct {
	policyFile, output, sort string
}

func newPsCommand(g *globalOptions) *cobra.Command {
	var opts psOptions
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "List every agent session with its process tree and memory, then the orphans",
		Long: `ps shows what reaper sees before it acts: every agent session on this
machine, each with its tree — servers, tool jobs, subagents — its memory
and CPU, then the orphans (the findings the policy names, which no live
session holds), then totals per client and for the machine.

A session is a client's own record whose process still runs (a Claude
Code session file, a Copilot CLI lock, a ledger's owner: the record's
words are its user's, and say so), or a process titled as a client's own
(claude, codex, opencode, cline, openclaw-gateway). Its state: live (its
terminal's foreground), background (on a terminal, behind another job),
headless (no terminal), or ended (its process is gone; what it left is
among the orphans). A finding inside a live session's tree — a server
the client superseded, a tool call's job it abandoned — is marked LEAK.

Memory is PSS where it can be read (each shared page split among the
processes that map it, so the sums add up), else RSS. As an ordinary
user, ps shows your sessions; as root, everyone's. It reads and signals
nothing a scan does not: fast enough to run every 2 s.`,
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
			pass, err := run.Scan(context.Background(), run.Config{Policy: pol, Clients: run.ClientsOf(clients, pol), Discover: true}, policy.ModeScan)
			if err != nil {
				return err
			}
			defer pass.Close()
			v := pass.PS()
			v.Sort(opts.sort)
			return g.write(v, opts.output)
		},
	}
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "policy `FILE` (which trees are findings; default as for scan)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVar(&opts.sort, "sort", "memory", "order sessions and orphans by memory, cpu or age, largest first")
	return cmd
}

package main

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/top"
)

// topOptions are the flags of `reaper top`.
type topOptions struct {
	policyFile, sort, auditLog string
	interval                   time.Duration
}

func newTopCommand(g *globalOptions) *cobra.Command {
	var opts topOptions
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch the agent sessions and orphans live; explain or end one from the list",
		Long: `top is reaper ps, live: every session with its tree, then the orphans,
refreshed every --interval (2 s at least), in the terminal (80 columns
will do; NO_COLOR turns colour off).

Keys: Up/Down (or j), PgUp/PgDn, g/G move; Enter folds a session's tree; s
cycles the order, m/c/a sort by memory, CPU or age; / searches (Enter
keeps the search, Esc clears it); e explains the selected process (as
reaper explain PID); r refreshes now; q or Ctrl-C quits.

k ends the selected finding — an orphan's tree, or a leak inside a live
session — through reap's own path confined to that tree: its dry-run is
shown first, and nothing is signalled until you press y. A live session's
own process is no finding, and k says so and does nothing. The reap takes
the reaper lock and writes the audit log as reap does.`,
		Example: "  reaper top\n  reaper top --sort cpu --interval 5s",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(audit.PSOrder, opts.sort) {
				return usagef("--sort %q: want %s", opts.sort, strings.Join(audit.PSOrder, ", "))
			}
			if opts.interval < top.MinInterval {
				return usagef("--interval %s: at least %s (each refresh reads every process)", opts.interval, top.MinInterval)
			}
			if !run.IsTerminal(os.Stdin) || !run.IsTerminal(os.Stdout) {
				return usagef("top needs a terminal: use reaper ps (or ps -o json) for a pipe")
			}
			pol, err := resolvePolicy(opts.policyFile)
			if err != nil {
				return err
			}
			userAuditLogDefault(cmd, &opts.auditLog)
			src := &run.Live{Reap: run.ReapConfig{
				Config:   run.Config{Policy: pol, Clients: run.ClientsOf(clients, pol), Discover: true},
				LockWait: 5 * time.Second, Records: run.Records{AuditLog: opts.auditLog, Journal: "auto", Log: g.log},
			}}
			return top.Run(cmd.Context(), top.New(src, top.Options{Interval: opts.interval, Sort: opts.sort, Style: g.tableStyle()}))
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` (which trees are findings, and what k may do; default as for scan)")
	f.StringVar(&opts.sort, "sort", "memory", "order sessions and orphans by memory, cpu or age, largest first")
	f.DurationVar(&opts.interval, "interval", top.MinInterval, "refresh every `D` (at least 2s)")
	f.StringVar(&opts.auditLog, "audit-log", "", "append what k decides and signals to `FILE`"+auditLogDefaultNote)
	return cmd
}

package main

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
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
		Use:     "top",
		Short:   "Watch the agent sessions and orphans live; explain or end one from the list",
		Example: "  reaper top\n  reaper top --sort cpu --interval 5s",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(audit.PSOrder, opts.sort) {
				return usagef("--sort %q: want %s", opts.sort, strings.Join(audit.PSOrder, ", "))
			}
			if opts.interval < top.MinInterval {
				return usagef("--interval %s: at least %s (each refresh reads every process)", opts.interval, top.MinInterval)
			}
			if !audit.IsTerminal(os.Stdin) || !audit.IsTerminal(os.Stdout) {
				return usagef("top needs a terminal: use reaper ps (or ps -o json) for a pipe")
			}
			pol, err := resolvePolicy(opts.policyFile)
			if err != nil {
				return err
			}
			userAuditLogDefault(cmd, &opts.auditLog)
			src := &view.Top{Reap: run.ReapConfig{
				Config:   run.NewConfig(pol, clients),
				LockWait: 5 * time.Second, Records: run.Records{AuditLog: opts.auditLog, Journal: "auto", Log: g.log},
			}}
			return top.Run(cmd.Context(), top.New(src, top.Options{Interval: opts.interval, Sort: opts.sort, Style: audit.StyleFor(g.stdout, g.color, g.noHeaders)}))
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("top") })
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` (which trees are findings, and what k may do; default as for scan)")
	f.StringVar(&opts.sort, "sort", "memory", "order sessions and orphans by memory, cpu or age, largest first")
	f.DurationVar(&opts.interval, "interval", top.MinInterval, "refresh every `D` (at least 2s)")
	f.StringVar(&opts.auditLog, "audit-log", "", "append what k decides and signals to `FILE`"+auditLogDefaultNote)
	return cmd
}

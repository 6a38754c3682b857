package main

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/paths"
)

type historyOptions struct {
	auditLog string
	since    string
	until    string
	filter   audit.HistoryFilter
	output   string
}

func newHistoryCommand(g *globalOptions) *cobra.Command {
	var opts historyOptions
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Say what reaper decided and did, from its audit log",
		Example: `  reaper history
  reaper history --since yesterday --outcome killed
  reaper history --since 7d --user alice --rule owner-dead -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.auditLog == "" {
				opts.auditLog = paths.Current().AuditLog
			}
			return runHistory(&opts, g, time.Now())
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("history") })
	f := cmd.Flags()
	f.StringVar(&opts.auditLog, "audit-log", "", "the audit log `FILE` to read, with its rotations (default: the system units' as root, the user's own otherwise)")
	f.StringVar(&opts.since, "since", "24h", "show what was recorded from `WHEN` on")
	f.StringVar(&opts.until, "until", "", "and before `WHEN`")
	f.StringVar(&opts.filter.Rule, "rule", "", "only the decisions of the rule `NAME`")
	f.StringVar(&opts.filter.User, "user", "", "only the trees of `USER` (a name or a uid)")
	f.StringVar(&opts.filter.Outcome, "outcome", "", "only the decisions with `OUTCOME`: "+audit.OutcomeList())
	f.StringVar(&opts.filter.Mode, "mode", "", "only the decisions of `MODE`: reap (what was done) or dry-run (reap --dry-run and top's previews: nothing signalled)")
	f.BoolVar(&opts.filter.Signals, "signals", false, "list every signal sent too (not with --rule, --user or --outcome)")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runHistory(opts *historyOptions, g *globalOptions, now time.Time) error {
	if err := validateOutput(&opts.output); err != nil {
		return err
	}
	if m := opts.filter.Mode; m != "" && m != "reap" && m != "dry-run" {
		return usagef("--mode %q: want reap or dry-run", m)
	}
	if err := opts.filter.Set(opts.since, opts.until, now); err != nil {
		return usagef("%v", err)
	}
	files, err := audit.LogFiles(opts.auditLog)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return noInputError{fmt.Errorf("no audit log at %s: reap writes one with --audit-log FILE (the system unit's is %s; a user's reap writes %s)", opts.auditLog, paths.SystemAuditLog, paths.Current().UserAuditLog)}
		}
		return noInputError{err}
	}
	h, err := audit.ReadHistory(files, opts.filter)
	if err != nil {
		return err
	}
	if u := opts.filter.User; u != "" && h.Totals.Decisions == 0 && !audit.KnownUser(u) {
		// A name neither this host nor the log knows: said, not an empty
		// list that reads as "nothing happened to that user". (A log's
		// records name their users: one from another host is read by name.)
		return usagef("--user %q: no such user here, and no record of one (name a user, or give a uid)", u)
	}
	if h.Skipped > 0 && g.noHeaders && opts.output != "json" {
		fmt.Fprintf(g.stderr, "warning: %s\n", h.SkippedNote())
	}
	return g.write(h, opts.output)
}

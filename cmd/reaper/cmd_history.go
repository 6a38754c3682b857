package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
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
		Long: `history reads the audit log that reap writes (--audit-log; the system
unit's is /var/log/reaper/audit.jsonl, the default as root; a user's reap
and watch write ~/.local/state/log/reaper/audit.jsonl — on macOS
~/Library/Logs/reaper/audit.jsonl — the default otherwise) and the rotations logrotate keeps
beside it (audit.jsonl.1, audit.jsonl.2.gz, …), and lists each decision:
when, its outcome, the rule, whose tree, its root pid, its RSS and its
command, then the sums. A report-only finding is in the log when a reap
first met it and when it changed, not once per run.

--since and --until take a duration back from now (24h, 90m), a date
(2026-11-23), a time (2026-11-23T08:00 or RFC 3339), or yesterday or
today (midnight, local time). The default is the last 24 hours.

The journal holds the same records, where journald runs:
journalctl MESSAGE_ID=8f3a1c9d5b2e4f6a8c0d1e2f3a4b5c6d --since yesterday

Exit status: 0 (nothing recorded is not an error), 2 a bad flag, 66 the
audit log does not exist.`,
		Example: `  reaper history
  reaper history --since yesterday --outcome killed
  reaper history --since 7d --user alice --rule owner-dead -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.auditLog == "" {
				opts.auditLog = defaultAuditLog()
			}
			return runHistory(&opts, g, time.Now())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.auditLog, "audit-log", "", "the audit log `FILE` to read, with its rotations (default: the system units' as root, the user's own otherwise)")
	f.StringVar(&opts.since, "since", "24h", "show what was recorded from `WHEN` on")
	f.StringVar(&opts.until, "until", "", "and before `WHEN`")
	f.StringVar(&opts.filter.Rule, "rule", "", "only the decisions of the rule `NAME`")
	f.StringVar(&opts.filter.User, "user", "", "only the trees of `USER` (a name or a uid)")
	f.StringVar(&opts.filter.Outcome, "outcome", "", "only the decisions with `OUTCOME`: killed, gone, failed, refused, planned or reported")
	f.BoolVar(&opts.filter.Signals, "signals", false, "list every signal sent too (not with --rule, --user or --outcome)")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runHistory(opts *historyOptions, g *globalOptions, now time.Time) error {
	if err := validateOutput(&opts.output); err != nil {
		return err
	}
	var err error
	if opts.filter.Since, err = parseWhen(opts.since, now); err != nil {
		return usagef("--since %q: %v", opts.since, err)
	}
	if opts.until != "" {
		if opts.filter.Until, err = parseWhen(opts.until, now); err != nil {
			return usagef("--until %q: %v", opts.until, err)
		}
	}

	switch opts.filter.Outcome {
	case "", "killed", "gone", "failed", "refused", "planned", "reported":
	default:
		return usagef("--outcome %q: want killed, gone, failed, refused, planned or reported", opts.filter.Outcome)
	}
	files, err := audit.LogFiles(opts.auditLog)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return noInputError{fmt.Errorf("no audit log at %s: reap writes one with --audit-log FILE (the system unit's is %s; a user's reap writes %s)", opts.auditLog, systemAuditLog, userAuditLog())}
		}
		return noInputError{err}
	}
	h, err := audit.ReadHistory(files, opts.filter)
	if err != nil {
		return err
	}
	if u := opts.filter.User; u != "" && h.Totals.Decisions == 0 && !knownUser(u) {
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

// parseWhen reads a point in time as --since and --until take it.
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	switch strings.ToLower(s) {
	case "":
		return time.Time{}, nil
	case "today":
		return midnight, nil
	case "yesterday":
		return midnight.AddDate(0, 0, -1), nil
	case "now":
		return now, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, errors.New("a duration back from now cannot be negative")
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want a duration (24h, 7d), a date (2006-01-02), a time (2006-01-02T15:04), yesterday or today")
}

// knownUser reports whether u is a uid, or a name this host knows.
func knownUser(u string) bool {
	if _, err := strconv.ParseUint(u, 10, 32); err == nil {
		return true
	}
	_, err := user.Lookup(u)
	return err == nil
}

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

// scanOptions are the flags of `reaper scan` (and, later, `reaper reap`).
type scanOptions struct {
	policyFile string
	ledgers    []string
	output     string
	procRoot   string
	auditLog   string
	metrics    string
	journal    string
	timeout    time.Duration
	all        bool
	exitCode   bool
}

func (o *scanOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.policyFile, "policy", "", "policy `FILE` (default "+paths.SystemPolicy+" as root, else "+paths.Said("linux").Policy+", if present, else the embedded report-only default)")
	f.StringArrayVar(&o.ledgers, "ledger", nil, "a ledger `PATH` (a v1 ledger file or an OpenClaw state dir), in addition to those the policy names and those discovered; repeatable; an invalid one stops the run (exit 78)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.StringVar(&o.procRoot, "proc", "", "read this `DIR` instead of /proc (Linux; fixtures)")
	f.StringVar(&o.auditLog, "audit-log", "", "append one JSON line per decision to `FILE`")
	f.StringVar(&o.metrics, "metrics", "", "write Prometheus textfile metrics to `FILE`, atomically")
	f.StringVar(&o.journal, "journal", "auto", "journald records: `WHEN` — auto (what reap does, when journald is there), on (every mode), off")
	f.BoolVar(&o.all, "all", false, "also list the reparented trees no rule matched, with what kept each rule from them")
	f.DurationVar(&o.timeout, "timeout", 0, "bound on the whole run; past it the run stops, continuing anything it stopped (default: scan 60s, reap 3×grace + 30s)")
}

func (o *scanOptions) validate() error {
	if o.timeout < 0 {
		return usagef("--timeout %s: want a duration of 0 or more (0: the default)", o.timeout)
	}
	switch o.journal {
	case "auto", "on", "off":
	default:
		return usagef("--journal %q: want auto, on or off", o.journal)
	}
	return validateOutput(&o.output)
}

// validateOutput checks an --output value, and makes it lower case:
// "-o JSON" is json.
func validateOutput(output *string) error {
	*output = strings.ToLower(*output)
	if *output != "table" && *output != "json" {
		return usagef("--output %q: want table or json", *output)
	}
	return nil
}

func newScanCommand(g *globalOptions) *cobra.Command {
	var opts scanOptions
	cmd := &cobra.Command{
		Use:   "scan",
		Short: "Find orphaned process trees and report them; never sends a signal",
		Example: `  reaper scan
  reaper scan --output json | jq '.findings[] | {root_pid, rule, reasons}'
  reaper scan --policy ./policy.toml --metrics /var/lib/prometheus/node-exporter/reaper.prom`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScan(cmd.Context(), &opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("scan", "ledgers", ledgersHelp(clients)) })
	opts.AddFlags(cmd.Flags())
	cmd.Flags().BoolVar(&opts.exitCode, "exit-code", false, "exit 4 when the scan reports a finding (for monitoring); 0 when none")
	return cmd
}

// ledgersHelp is the help's paragraph on the state reaper reads, with the
// clients and their dirs from the set it was built with: a new adapter
// is named there without an edit here.
func ledgersHelp(cs client.Set) string {
	text := fmt.Sprintf(`Ledgers: supervisors' v1 ledger files and the agent clients' own state
add the reasons owner-dead, run-done and session-ended, and make a live
owner's running runs off limits: the records of %s (docs/clients.md says
which each keeps), and the MCP servers each client's config declares.
reaper reads those --ledger names, those the policy's [[owner]] entries
name, and, on the live table, the clients' state dirs it finds (its own
environment's, every home's as root — %s — and those live clients and
orphans name), each user's as that user. Every pid in them is checked
against the live process's start identity and user before it counts, and
a user's files speak only for that user's processes.`, strings.Join(cs.Titles(), ", "), strings.Join(cs.Homes(), ", "))
	return strings.Join(audit.Wrap(text, 74), "\n")
}

func runScan(ctx context.Context, opts *scanOptions, g *globalOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	started := time.Now()
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	pass, err := run.Scan(ctx, opts.config(pol, opts.timeout, true), policy.ModeScan)
	if err != nil {
		return err
	}
	defer pass.Close()
	if err := emit(pass, opts, g, time.Since(started)); err != nil {
		return err
	}
	if opts.exitCode && len(pass.Plan.Items) > 0 {
		return exitStatus(audit.ExitFindings)
	}
	return nil
}

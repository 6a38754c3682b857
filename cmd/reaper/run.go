package main

import (
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

// clients are the agent clients reaper knows, handed down to every
// package below: the one place the list is named.
var clients = all.Clients

// resolvePolicy loads the policy named on the command line, else the first
// default location that exists, else the embedded default (run.LoadPolicy).
func resolvePolicy(flag string) (*policy.Policy, error) { return run.LoadPolicy(flag, clients) }

// config is the run configuration of a scan's or a reap's flags, once its
// policy is resolved (run.NewConfig), timeout its bound where a flag or
// the verb sets one.
func (o *scanOptions) config(pol *policy.Policy, timeout time.Duration, advise bool) run.Config {
	cfg := run.NewConfig(pol, clients)
	cfg.ProcRoot, cfg.Ledgers, cfg.Advise, cfg.All = o.procRoot, o.ledgers, advise, o.all
	if timeout > 0 {
		cfg.Timeout = timeout
	}
	return cfg
}

// records are the traces a scan's or a reap's flags ask for.
func (o *scanOptions) records(g *globalOptions) run.Records {
	return run.Records{AuditLog: o.auditLog, Metrics: o.metrics, Journal: o.journal, Log: g.log}
}

// emit writes a scan's report to stdout, the audit log and the metrics file.
func emit(pass *run.Pass, opts *scanOptions, g *globalOptions, took time.Duration) error {
	rep := pass.Report()
	if err := opts.records(g).Record(rep, rep, nil, took); err != nil {
		return err
	}
	return writeReport(rep, opts, g)
}

// writeReport prints the report on stdout, as a table or JSON.
func writeReport(rep *audit.Report, opts *scanOptions, g *globalOptions) error {
	if g.quiet && opts.output != "json" {
		if err := rep.WriteQuiet(g.stdout); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		return nil
	}
	if err := g.write(rep, opts.output); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/client/declared"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

// systemPolicy is the policy a root reaper reads by default.
const systemPolicy = "/etc/reaper/policy.toml"

// clients are the agent clients reaper knows, handed down to every
// package below: the one place the list is named.
var clients = all.Clients

// clientsOf are the clients a run with pol knows: the shipped ones and
// those pol declares with session files (client/declared).
func clientsOf(pol *policy.Policy) client.Set {
	list := declared.Clients(pol)
	if len(list) == 0 {
		return clients
	}
	return client.NewSet(append(slices.Clone(clients.All()), list...)...)
}

// policyClients is what a policy is told of the clients.
func policyClients() policy.Clients {
	return policy.Clients{Owners: clients.Owners(), Marks: clients.Marks(), Names: clients.Names()}
}

// resolvePolicy loads the policy named on the command line, else the first
// default location that exists, else the embedded default. A default file
// that exists but can't be read is an error, not a reason to fall back.
func resolvePolicy(flag string) (*policy.Policy, error) {
	if flag != "" {
		return policy.Load(flag, policyClients())
	}
	for _, path := range defaultPolicyPaths() {
		_, err := os.Stat(path)
		if err == nil {
			return policy.Load(path, policyClients())
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, &policy.Error{File: path, Msg: err.Error()}
		}
	}
	return policy.Default(policyClients()), nil
}

func defaultPolicyPaths() []string {
	if euid() == 0 {
		return []string{systemPolicy}
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".config")
	}
	return []string{filepath.Join(dir, "reaper", "policy.toml")}
}

func euid() uint32 { return run.EUID() }

// config is the run configuration of a scan's or a reap's flags, once its
// policy is resolved: every run discovers the clients' state.
func (o *scanOptions) config(pol *policy.Policy, timeout time.Duration, advise bool) run.Config {
	return run.Config{Policy: pol, Clients: clientsOf(pol), ProcRoot: o.procRoot, Ledgers: o.ledgers, Discover: true,
		Advise: advise, Timeout: timeout, ReadTable: readSnapshot}
}

// records are the traces a scan's or a reap's flags ask for.
func (o *scanOptions) records(g *globalOptions) run.Records {
	return run.Records{AuditLog: o.auditLog, Metrics: o.metrics, Journal: o.journal, Log: g.log}
}

// readSnapshot takes the process table; tests replace it with a slow one.
var readSnapshot = platform.ReadSnapshot

// collect is a run's collect with discovery, for the commands that only
// read (advice off): explain, ledger show, pty, doctor. everyUser reads
// the state of users who own no process too (ledger show lists it).
func collect(ctx context.Context, pol *policy.Policy, procRoot string, ledgers []string, timeout time.Duration, discover, everyUser bool) (*run.Table, error) {
	t, err := run.Collect(ctx, run.Config{Policy: pol, Clients: clientsOf(pol), ProcRoot: procRoot, Ledgers: ledgers,
		Discover: discover, EveryUser: everyUser, Timeout: timeout, ReadTable: readSnapshot})
	if errors.Is(err, run.ErrProcFlag) {
		return nil, usagef("%v", err)
	}
	return t, err
}

// emit writes a scan's report to stdout, the audit log and the metrics file.
func emit(t *run.Table, pol *policy.Policy, plan *policy.Plan, opts *scanOptions, g *globalOptions, took time.Duration) error {
	rep := run.Report(t, pol, plan, opts.all)
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

// utf8Locale reports whether the locale the output is read in is UTF-8:
// the first of LC_ALL, LC_CTYPE and LANG that is set says (locale(7)); none
// set is the C locale, ASCII.
func utf8Locale() bool {
	for _, v := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if l := os.Getenv(v); l != "" {
			l = strings.ToLower(l)
			return strings.Contains(l, "utf-8") || strings.Contains(l, "utf8")
		}
	}
	return false
}

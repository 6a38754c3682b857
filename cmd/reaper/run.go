package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/gather"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// systemPolicy is the policy a root reaper reads by default.
const systemPolicy = "/etc/reaper/policy.toml"

// clients are the agent clients reaper knows, handed down to every
// package below: the one place the list is named.
var clients = all.Clients

// policyClients is what a policy is told of the clients.
func policyClients() policy.Clients {
	return policy.Clients{Owners: clients.Owners(), Marks: clients.Marks()}
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

func euid() uint32 { return uint32(os.Geteuid()) }

// judgeAs is the uid a plan is made for: the reaper's own, or for a
// fixture's table the uid of the reaper that took it (its self/status),
// so that a fixture reads the same whoever scans it.
func judgeAs(snap *platform.Snapshot) uint32 {
	if snap.Self == 0 && snap.FixtureUID != platform.NoUID {
		return snap.FixtureUID
	}
	return euid()
}

// scanRun is one snapshot and what the scan made of it.
type scanRun struct {
	snap     *platform.Snapshot
	result   *scan.Result
	problems []string       // state that could not be read
	doubts   []policy.Doubt // and the trees it could speak for
	dirs     []gather.DirRead
}

// collect takes the snapshot, scans it, and applies the ledgers, within
// ctx: the run's deadline and an interrupt end it. Every file is read
// without blocking (platform.ReadFile), so the bound is for what is slow
// rather than stuck — a loaded host's /proc, a state database its gateway
// holds. A reader cut off goes on until the process exits; it holds no
// lock and sends no signal.
func collect(ctx context.Context, pol *policy.Policy, procRoot string, ledgers []string, timeout time.Duration, advise bool) (*scanRun, error) {
	if err := ctx.Err(); err != nil {
		return nil, cutShort(ctx, timeout, "before reading the process table")
	}
	type result struct {
		run *scanRun
		err error
	}
	done := make(chan result, 1)
	go func() {
		run, err := collectWith(ctx, pol, procRoot, ledgers, true, advise)
		done <- result{run, err}
	}()
	select {
	case r := <-done:
		return r.run, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.run != nil {
				r.run.snap.Close()
			}
		}()
		return nil, cutShort(ctx, timeout, "while reading the process table and ledgers")
	}
}

// cutShort is the error of a run that ctx ended: nothing was signalled.
func cutShort(ctx context.Context, timeout time.Duration, when string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the run's deadline (--timeout %s) passed %s: nothing was signalled", timeout, when)
	}
	return fmt.Errorf("interrupted %s: nothing was signalled", when)
}

// readSnapshot takes the process table; tests replace it with a slow one.
var readSnapshot = platform.ReadSnapshot

// collectWith is collect, with discovery of the clients' state on or off, and
// advice (with its one-second look at MCP pools) only when the report
// shows it.
func collectWith(ctx context.Context, pol *policy.Policy, procRoot string, ledgers []string, discover, advise bool) (*scanRun, error) {
	if procRoot != "" && runtime.GOOS != "linux" {
		return nil, usagef("--proc is Linux only")
	}
	if procRoot == "" {
		procRoot = platform.DefaultProcRoot
	}
	opts := gather.Options{Named: ledgers, Discover: discover && procRoot == platform.DefaultProcRoot, Clients: clients}
	for _, o := range pol.Owners {
		for _, path := range o.Ledger {
			opts.OwnerLedgers = append(opts.OwnerLedgers, gather.ExpandHome(path))
		}
	}
	pending := gather.Begin(ctx, opts)
	snap, err := readSnapshot(procRoot)
	if err != nil {
		pending.Abandon()
		return nil, err
	}
	// The homes' state does not depend on the table: read it while the
	// table is scanned.
	pending.Start()
	// Of the environments read, keep what the policy, the scan and the
	// clients' adapters look up.
	snap.KeepEnv(append(pol.EnvNames(), clients.EnvNames()...))
	var set *gather.Set
	res, err := scan.Scan(snap, pol.ScanConfig(), func(owners, roots []*platform.Process) (scan.Evidence, error) {
		var err error
		if set, err = gather.Load(ctx, opts, pending, snap, owners, roots); err != nil {
			return scan.Evidence{}, err
		}
		ev := set.Evidence
		ev.Advise, ev.Sample = advise, sampleActivity(snap)
		return ev, nil
	})
	if err != nil {
		snap.Close()
		return nil, err
	}
	snap.Warnings = append(snap.Warnings, set.Warnings...)
	for _, ig := range res.Ignored {
		snap.Warnings = append(snap.Warnings, ig.String())
	}
	return &scanRun{snap: snap, result: res, problems: set.Messages(), doubts: set.Doubts(), dirs: set.Read}, nil
}

// emit writes the report to stdout, the audit log and the metrics file.
func emit(run *scanRun, pol *policy.Policy, plan *policy.Plan, opts *scanOptions, g *globalOptions, took time.Duration) error {
	rep := newReport(run, pol, plan, opts)
	if err := record(rep, rep, nil, opts, g, took); err != nil {
		return err
	}
	return writeReport(rep, run, opts, g)
}

// newReport makes the report of a plan: every process it names is read
// now — command lines, terminals held, activity — so that nothing is read
// after (a reap makes it before it acts, and only records the outcomes
// later).
func newReport(run *scanRun, pol *policy.Policy, plan *policy.Plan, opts *scanOptions) *audit.Report {
	rep := audit.NewReport(pol, run.result, plan)
	rep.Errors = append(rep.Errors, run.problems...)
	inspect(run, plan).apply(rep)
	if opts.all {
		rep.AddUnmatched(pol, run.result, plan)
	}
	rep.SetWarnings(pol, run.snap) // with what those reads added
	return rep
}

// record leaves the run's traces: the audit log and journald of the
// findings in logged (rep's, or those of them worth recording again), the
// metrics of all of rep. journald is best effort: where it is not running, nothing is sent and
// the audit log is the record.
func record(rep, logged *audit.Report, signals []audit.Record, opts *scanOptions, g *globalOptions, took time.Duration) error {
	if opts.auditLog != "" {
		if err := audit.AppendLog(opts.auditLog, logged, signals); err != nil {
			return err
		}
	}
	if opts.journal == "on" || opts.journal == "auto" && rep.Mode == string(policy.ModeReap) {
		if _, err := audit.Journal(logged, signals); err != nil && g.log != nil {
			g.log.Warn("journald records not written", "err", err)
		}
	}
	if opts.metrics != "" {
		if err := audit.WriteMetrics(opts.metrics, rep, signals, took); err != nil {
			return err
		}
	}
	return nil
}

// writeReport prints the report on stdout, as a table or JSON.
func writeReport(rep *audit.Report, run *scanRun, opts *scanOptions, g *globalOptions) error {
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

// poolWindow is how long MCP pools are watched to tell the ones in use
// from the idle ones; it is spent only when a live gateway holds some.
const poolWindow = time.Second

// sampleActivity samples processes twice, poolWindow apart, and
// returns what each moved and how often it woke in between (poolWindow).
func sampleActivity(snap *platform.Snapshot) scan.Sampler {
	return func(procs []*platform.Process) map[int]scan.Activity {
		before := map[int]platform.Sample{}
		for _, p := range procs {
			if sm, err := snap.SampleProcess(p); err == nil {
				before[p.PID] = sm
			}
		}
		time.Sleep(poolWindow)
		out := map[int]scan.Activity{}
		for _, p := range procs {
			b, ok := before[p.PID]
			a, err := snap.SampleProcess(p)
			if !ok || err != nil || !a.IOKnown || !b.IOKnown {
				continue
			}
			out[p.PID] = scan.Activity{
				Bytes:    a.IO.RChar + a.IO.WChar - b.IO.RChar - b.IO.WChar,
				Switches: a.VoluntarySwitches - b.VoluntarySwitches,
			}
		}
		return out
	}
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

package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/declared"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run/gather"
	"github.com/orphanreaper/reaper/scan"
)

// Config is what one run is made of: what cmd maps its flags to.
type Config struct {
	Policy  *policy.Policy
	Clients client.Set
	// ProcRoot is the process table to read: "" is the live /proc; a
	// fixture's directory is for scan alone.
	ProcRoot string
	// Ledgers are the ledger files and state dirs named on the command
	// line: one that cannot be read fails the run.
	Ledgers []string
	// Discover: read the clients' state dirs found (on the live table).
	Discover bool
	// EveryUser: read the state of users who own no process in the table
	// too (gather.Options.EveryUser).
	EveryUser bool
	// Cache keeps the state dirs' reads between a watch's passes
	// (gather.Cache); nil reads them all.
	Cache *gather.Cache
	// Advise: the pass asks the clients' advisers for advice, a phase of
	// its own after attribution (Scan), which takes its second's look at
	// the MCP pools of live gateways; the report shows it.
	Advise bool
	// Timeout bounds each read of the table (Collect), and names the
	// bound in its error; the caller's context may end it sooner.
	// NewConfig sets a minute; 0 leaves the bound to the context.
	Timeout time.Duration
	// All: the report lists the trees no rule matched too (scan --all).
	All bool
	// EveryStdin asks who writes to every open stdin, not only to the
	// findings a rule takes: explain's question.
	EveryStdin bool
	// Only, when set, keeps the findings it accepts and drops the rest
	// before planning: 'reaper run' reaps what its command left, nothing
	// else of the host's.
	Only func(f *scan.Finding) bool
	// ReadTable reads the process table (nil: platform.ReadSnapshot): a
	// seam for tests that make it slow.
	ReadTable tableReader
}

// Table is one read of the process table and what the scan made of it.
type Table struct {
	Snap   *platform.Snapshot
	Result *scan.Result
	// Problems are the state that could not be read, Doubts the trees it
	// could speak for; Dirs every discovered state dir and its read.
	Problems []string
	Doubts   []policy.Doubt
	Dirs     []gather.DirRead
	// Kept counts the state dirs whose read was kept from an earlier
	// pass (Config.Cache) rather than read for this table.
	Kept int
	// Evidence is what the clients' state and the ledgers said, as the
	// scan took it: the sessions `reaper ps` shows are in it.
	Evidence scan.Evidence
}

// Close releases what the table holds open.
func (t *Table) Close() error { return t.Snap.Close() }

// UID is the uid a plan of t is made for: the reaper's own, or for a
// fixture's table the uid of the reaper that took it (its self/status),
// so that a fixture reads the same whoever scans it.
func (t *Table) UID() uint32 {
	if t.Snap.Self == 0 && t.Snap.FixtureUID != platform.NoUID {
		return t.Snap.FixtureUID
	}
	return EUID()
}

// EUID is the reaper's effective uid.
func EUID() uint32 { return platform.EUID() }

// Collect takes the table, scans it, and applies the ledgers and the
// clients' state, within cfg.Timeout and ctx: the run's deadline and an
// interrupt end it.
// Every file is read without blocking (platform.ReadFile), so the bound is
// for what is slow rather than stuck — a loaded host's /proc, a state
// database its gateway holds. A read cut off goes on until the process
// exits; it holds no lock and sends no signal.
func Collect(ctx context.Context, cfg Config) (*Table, error) {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, cutShort(ctx, cfg.Timeout, "before reading the process table")
	}
	type result struct {
		t   *Table
		err error
	}
	done := make(chan result, 1)
	go func() {
		t, err := collect(ctx, cfg)
		done <- result{t, err}
	}()
	select {
	case r := <-done:
		return r.t, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.t != nil {
				r.t.Close()
			}
		}()
		return nil, cutShort(ctx, cfg.Timeout, "while reading the process table and ledgers")
	}
}

// cutShort is the error of a run that ctx ended: nothing was signalled.
func cutShort(ctx context.Context, timeout time.Duration, when string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the run's deadline (--timeout %s) passed %s: nothing was signalled", timeout, when)
	}
	return fmt.Errorf("interrupted %s: nothing was signalled", when)
}

// ErrProcFlag is a --proc given off Linux.
var ErrProcFlag = errors.New("--proc is Linux only")

// collect is Collect's work, on its own goroutine.
func collect(ctx context.Context, cfg Config) (*Table, error) {
	procRoot := cfg.ProcRoot
	if procRoot != "" && runtime.GOOS != "linux" {
		return nil, ErrProcFlag
	}
	if procRoot == "" {
		procRoot = platform.DefaultProcRoot
	}
	pol := cfg.Policy
	opts := gather.Options{Named: cfg.Ledgers, Discover: cfg.Discover && procRoot == platform.DefaultProcRoot, Clients: cfg.Clients,
		EveryUser: cfg.EveryUser, Cache: cfg.Cache}
	for _, o := range pol.Owners {
		for _, path := range o.Ledger {
			opts.OwnerLedgers = append(opts.OwnerLedgers, gather.ExpandHome(path))
		}
	}
	pending := gather.Begin(ctx, opts)
	read := cfg.ReadTable
	if read == nil {
		read = ReadTable
	}
	if read == nil {
		read = platform.ReadSnapshot
	}
	snap, err := read(procRoot)
	if err != nil {
		pending.Abandon()
		return nil, err
	}
	// The homes' state does not depend on the table: read it while the
	// table is scanned.
	pending.Start(snap)
	// Of the environments read, keep what the policy, the scan and the
	// clients' adapters look up.
	snap.KeepEnv(append(pol.EnvNames(), cfg.Clients.EnvNames()...))
	// The scan's two phases, the evidence read between them: gather is
	// called here, by the run, never by scan.
	res := scan.Table(snap, pol.ScanConfig())
	set, err := gather.Load(ctx, opts, pending, snap, res.LiveOwners(), res.Roots())
	if err != nil {
		snap.Close()
		return nil, err
	}
	ev := set.Evidence
	res.Attribute(ev)
	snap.Warnings = append(snap.Warnings, set.Warnings...)
	for _, ig := range res.Ignored {
		snap.Warnings = append(snap.Warnings, ig.String())
	}
	return &Table{Snap: snap, Result: res, Problems: set.Messages(), Doubts: set.Doubts(), Dirs: set.Read, Kept: set.Kept, Evidence: ev}, nil
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

// tableReader reads a process table: platform.ReadSnapshot, or a test's
// slow stand-in.
type tableReader = func(root string) (*platform.Snapshot, error)

// ReadTable, when set, is what every run reads the table with whose
// Config names no reader: a seam for the command's tests.
var ReadTable tableReader

// ChildCommand is the hidden first argument that makes the binary the
// reader child that reads one user's state as that user (gather).
const ChildCommand = gather.ChildCommand

// ChildMain is the reader child's main, knowing cs and the clients a
// policy declares; it returns the exit status.
func ChildMain(args []string, stdout, stderr io.Writer, cs client.Set) int {
	return gather.ChildMain(args, stdout, stderr, cs, declared.FromSpec)
}

// PidfdSupported says whether this kernel gives pidfds, and pidfs (for
// reaper version).
func PidfdSupported() (pidfd, pidfs bool) { return kill.PidfdSupported() }

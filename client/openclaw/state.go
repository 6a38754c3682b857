package openclaw

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// OpenClaw keeps three generations of on-disk state (docs/openclaw.md). reaper reads
// them, never writes them, and treats every pid in them as a claim the scan
// must verify: OpenClaw's own code says "Session-store PIDs are stale data …
// fail closed to avoid killing an unrelated process after PID reuse".

// OwnerName is the owner name OpenClaw's state is attributed to; the
// embedded policy's [[owner]] has the same name.
const OwnerName = "openclaw-gateway"

// Boot describes the current boot, which OpenClaw's start times are
// relative to.
type Boot struct {
	ID   string    // /proc/sys/kernel/random/boot_id
	Time time.Time // when the machine booted
}

// Bounds on what one user's home and state dir can make reaper read: a
// gateway keeps a few locks and a profile or two, so more is refused (the
// locks: an error that holds back that user's trees) or cut (profiles in
// name order).
const (
	maxProfiles = 16
	maxLocks    = 32
	maxAgents   = 32
)

// Home is an account's home directory and the account's uid.
type Home struct {
	Dir string
	UID int
}

// maxHomeEntries bounds the names read from one home directory when
// looking for profiles: a user can fill their home with anything.
const maxHomeEntries = 1 << 16

// StateDirs lists the OpenClaw state directories that exist for the
// given homes and explicit dirs (OPENCLAW_STATE_DIR values): ~/.openclaw,
// profiles ~/.openclaw-<profile>, and the legacy ~/.clawdbot, ~/.moldbot,
// ~/.moltbot (src/config/paths.ts). Each dir appears once. A home counts
// only if its account owns it — /bin, /usr/sbin or /dev, the homes of
// system accounts, are not listed — and a dir found in a home must belong
// to that account too: a link from a user's home to a directory of
// someone else's (/etc, /root) is not that user's state and is skipped.
func StateDirs(homes []Home, explicit []string) []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string, owner int) {
		d = filepath.Clean(d)
		if seen[d] {
			return
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			if uid, ok := statedir.OwnerUID(d); owner != platform.AnyOwner && (!ok || uid != owner) {
				return
			}
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, d := range explicit {
		if d != "" {
			add(d, platform.AnyOwner)
		}
	}
	listed := map[string]bool{}
	for _, home := range homes {
		dir := filepath.Clean(home.Dir)
		if listed[dir] {
			continue
		}
		listed[dir] = true
		if owner, ok := statedir.OwnerUID(dir); !ok || owner != home.UID {
			continue
		}
		add(filepath.Join(dir, ".openclaw"), home.UID)
		for _, p := range profiles(dir) {
			add(p, home.UID)
		}
		for _, legacy := range []string{".clawdbot", ".moldbot", ".moltbot"} {
			add(filepath.Join(dir, legacy), home.UID)
		}
	}
	return dirs
}

// profiles lists a home's ~/.openclaw-<profile> entries, in name order, at
// most maxProfiles of them, reading at most maxHomeEntries names.
func profiles(home string) []string {
	f, err := os.Open(home)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for read := 0; read < maxHomeEntries; {
		names, err := f.Readdirnames(1024)
		read += len(names)
		for _, n := range names {
			if strings.HasPrefix(n, ".openclaw-") {
				out = append(out, filepath.Join(home, n))
			}
		}
		if err != nil {
			break
		}
	}
	sort.Strings(out)
	return out[:min(len(out), maxProfiles)]
}

// IsStateDir reports whether dir looks like an OpenClaw state dir.
func IsStateDir(dir string) bool {
	for _, name := range []string{"openclaw.json", "acpx", "state", "gateway-instance-id", "agents", "process-leases.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// gatewayLock is the payload of an OpenClaw gateway lock file
// (src/infra/gateway-lock.ts): who the live gateway is.
type gatewayLock struct {
	PID       int       `json:"pid"`
	CreatedAt time.Time `json:"createdAt"`
	// StartTime is field 22 of the gateway's /proc/PID/stat (Linux only).
	StartTime *uint64 `json:"startTime"`
	StateDir  string  `json:"stateDir"`
	Role      string  `json:"role"`
}

// readLocks reads the gateway lock files for the state dir, in every place
// a generation kept them: the per-uid lock dir inside the state dir,
// <state>/tmp/openclaw-<uid>/ (2026.9.x: resolveGatewayLockDir,
// gateway.<sha256(configPath)[:8]>.lock and gateway.state.lock), the state
// dir itself and its state/ subdir, and the system-wide per-uid dir of
// earlier generations, /tmp/openclaw-<uid>. Anyone can make
// /tmp/openclaw-<uid> first, or drop a file in a dir its user left open:
// a lock counts only if the state dir's owner owns it and the directory
// it is in, and one of anyone else's is skipped and reported (raw.skip),
// never the user's doubt. Locks naming another state dir, or of another
// role than the gateway's (agent-embedded, sqlite-maintenance, …), are
// skipped. The files end in a long tail of whitespace, which JSON allows.
// It returns the newest.
func (raw *Raw) readLocks(sd statedir.Dir) *Lock {
	type loc struct{ base, rel string }
	var paths []loc
	for _, sub := range []string{filepath.Join("tmp", "openclaw-"+strconv.Itoa(sd.Owner)), ".", "state"} {
		m, _ := filepath.Glob(filepath.Join(sd.Path, sub, "gateway*.lock"))
		for _, p := range m {
			paths = append(paths, loc{sd.Path, filepath.Join(sub, filepath.Base(p))})
		}
	}
	tmpDir := "openclaw-" + strconv.Itoa(sd.Owner)
	if uid, err := platform.DirOwner(filepath.Join(os.TempDir(), tmpDir)); err == nil && uid != sd.Owner {
		raw.Skip(filepath.Join(os.TempDir(), tmpDir), fmt.Sprintf("owned by uid %d, not the state's uid %d: its locks are not read", uid, sd.Owner))
	} else if err == nil {
		m, _ := filepath.Glob(filepath.Join(os.TempDir(), tmpDir, "gateway*.lock"))
		for _, p := range m {
			paths = append(paths, loc{os.TempDir(), filepath.Join(tmpDir, filepath.Base(p))})
		}
	}
	if len(paths) > maxLocks {
		raw.Problem(&ledger.Error{File: sd.Path, Msg: fmt.Sprintf("%d gateway lock files: more than %d, none read", len(paths), maxLocks)})
		return nil
	}
	var newest *Lock
	for _, lp := range paths {
		p := filepath.Join(lp.base, lp.rel)
		b, err := platform.ReadBeneath(lp.base, lp.rel, ledger.MaxSize, sd.Owner)
		if err != nil {
			raw.ReadError(p, err)
			continue
		}
		var l gatewayLock
		if err := json.Unmarshal(b, &l); err != nil || l.PID <= 0 {
			raw.Problem(&ledger.Error{File: p, Msg: "not a gateway lock: want {\"pid\": N, \"createdAt\": …}"})
			continue
		}
		if l.StateDir != "" && filepath.Clean(l.StateDir) != sd.Path || l.Role != "" && l.Role != "gateway" {
			continue
		}
		if newest == nil || l.CreatedAt.After(newest.CreatedAt) {
			newest = &Lock{PID: l.PID, CreatedAt: l.CreatedAt, StartTime: l.StartTime, Path: p}
		}
	}
	return newest
}

// Lock is a gateway lock as read: who it names, since when, and where it is.
type Lock struct {
	PID       int       `json:"pid"`
	CreatedAt time.Time `json:"created_at"`
	StartTime *uint64   `json:"start_time,omitempty"`
	Path      string    `json:"path"`
}

// owner turns the newest lock into the owner of the state dir's leases.
// Locks from before this boot name a gateway of another boot: gone.
func (l *Lock) owner(boot Boot, instance string) ledger.Owner {
	o := ledger.Owner{Name: OwnerName, PID: l.PID, Instance: instance}
	switch {
	case !boot.Time.IsZero() && l.CreatedAt.Before(boot.Time):
		o.Gone = fmt.Sprintf("the lock %s was taken before this boot", l.Path)
	case l.StartTime != nil && boot.ID != "":
		o.Start = boot.ID + ":" + strconv.FormatUint(*l.StartTime, 10)
	}
	return o
}

// lease is one ACP process lease (extensions/acpx/src/process-lease.ts).
type lease struct {
	LeaseID           string  `json:"leaseId"`
	GatewayInstanceID string  `json:"gatewayInstanceId"`
	SessionKey        string  `json:"sessionKey"`
	WrapperPath       string  `json:"wrapperPath"`
	RootPID           int     `json:"rootPid"`
	ProcessGroupID    int     `json:"processGroupId"`
	StartedAt         float64 `json:"startedAt"` // epoch milliseconds
	State             string  `json:"state"`
}

// run converts a lease. Leases record no start identity, but the wrapper
// they name carries --openclaw-acpx-lease-id <id> in its argv, which proves
// which process the root pid is.
func (l *lease) run() (ledger.Run, error) {
	if l.LeaseID == "" || l.RootPID < 0 {
		return ledger.Run{}, errors.New("lease without leaseId or with a negative rootPid")
	}
	r := ledger.Run{ID: l.LeaseID, Kind: ledger.KindACP, PID: l.RootPID, PGID: l.ProcessGroupID, Session: l.SessionKey,
		Command: l.WrapperPath, ArgvProof: [2]string{"--openclaw-acpx-lease-id", l.LeaseID}}
	switch l.State {
	case "open", "closing":
		r.State = ledger.RunRunning
	case "closed", "lost":
		r.State = ledger.RunDone
	default:
		return ledger.Run{}, fmt.Errorf("lease %s: state %q: want open, closing, closed or lost", l.LeaseID, l.State)
	}
	if l.StartedAt > 0 {
		t := time.UnixMilli(int64(l.StartedAt)).UTC()
		r.StartedAt = &t
	}
	return r, nil
}

// parseLeaseFile parses acpx/process-leases.json: {"version":1,"leases":[…]}.
func parseLeaseFile(path string, b []byte) ([]lease, error) {
	var doc struct {
		Version int     `json:"version"`
		Leases  []lease `json:"leases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, &ledger.Error{File: path, Line: statedir.JSONErrLine(b, err), Msg: "not a lease file: " + statedir.JSONProblem(err)}
	}
	if doc.Version != 1 {
		return nil, &ledger.Error{File: path, Msg: fmt.Sprintf("lease file version %d: this reaper reads version 1", doc.Version)}
	}
	return doc.Leases, nil
}

// State is what one OpenClaw state dir says, judged: the newest gateway
// lock, the ACP process leases and the codex app-server registry as
// ledgers, and the task and session stores.
type State struct {
	// Ledgers are the leases (JSON file, Gen B, and the SQLite keyed store,
	// Gen C), owned by the gateway the newest lock names, and the codex
	// app-server registry (Gen C).
	Ledgers []*ledger.Ledger
	// Gateway is who the newest gateway lock names (nil: no lock).
	Gateway *Gateway
	// Tasks is what the task and session stores say (nil: no state store).
	Tasks *Tasks
	// Servers are the stdio MCP servers of the dir's openclaw.json.
	Servers []MCPServer
}

// ReadState reads the state dir in this process (ReadRaw) and judges what
// it read (Raw.State) as its owner's word. Files that do not exist are
// skipped; files that exist and do not parse are returned as errors, and
// what they would have said is missing — the caller must not act on the
// dir's evidence. The config's MCP servers are not read (ReadMCPServers).
func ReadState(dir string, boot Boot) (*State, []error) {
	raw := readRaw(filepath.Clean(dir), false)
	if raw.Missing {
		return nil, raw.Errors()
	}
	return raw.State(raw.UID, boot)
}

// State judges what the state dir's files said, as the word of uid (the
// dir's owner as its reader knew it, never what the files say of
// themselves): the newest lock names the gateway, leases started after it
// took the lock are its runs and older ones a previous generation's, the
// registry rows are owned by the parent they name. Every ledger's speaker
// is uid.
func (raw *Raw) State(uid uint32, boot Boot) (*State, []error) {
	dir := raw.Dir
	st := &State{Servers: raw.Servers}
	errs := raw.Errors()
	lock := raw.Lock
	if lock != nil {
		st.Gateway = &Gateway{StateDir: dir, Default: filepath.Base(dir) == ".openclaw", UID: int(uid),
			Owner: lock.owner(boot, ""), Lock: lock.Path, Created: lock.CreatedAt}
	}
	if len(raw.Leases) > 0 {
		st.Ledgers = append(st.Ledgers, leaseLedgers(dir, raw.Leases, lock, boot, raw.Instance, &errs)...)
	}
	if t := raw.Tasks; t != nil {
		st.Tasks = t
		t.owner = int(uid)
		if t.Codex != nil {
			source := t.Source + " codex/app-server-processes"
			for _, row := range t.Codex.Servers {
				l, err := row.ledger(source)
				if err != nil {
					continue // reported when read (the store's rows that did not parse)
				}
				st.Ledgers = append(st.Ledgers, l)
			}
		}
	}
	for i := range st.Servers {
		st.Servers[i].UID = uid
	}
	for _, l := range st.Ledgers {
		l.Speaker = uid // the state dir's owner speaks for its own processes only
	}
	return st, errs
}

// Read is ReadState's ledgers.
func Read(dir string, boot Boot) ([]*ledger.Ledger, []error) {
	st, errs := ReadState(dir, boot)
	if st == nil {
		return nil, errs
	}
	return st.Ledgers, errs
}

// Gateway is who an OpenClaw state dir's newest gateway lock says
// its gateway is: what a foreground gateway's children — which carry no
// pid marker — can be attributed through.
type Gateway struct {
	// StateDir is the state dir; Default is set when it is a user's
	// ~/.openclaw, where a child with no OPENCLAW_STATE_DIR belongs.
	StateDir string
	Default  bool
	// UID owns the state dir.
	UID int
	// Owner is the gateway the lock names (Gone set when the lock itself
	// proves it gone), and Lock the lock file, taken at Created.
	Owner   ledger.Owner
	Lock    string
	Created time.Time
}

// leaseLedgers groups leases by the gateway generation that owns them: the
// gateway the newest lock names owns leases started after it took the lock;
// older leases belong to a previous generation, which is gone.
func leaseLedgers(dir string, leases []lease, current *Lock, boot Boot, instance string, errs *[]error) []*ledger.Ledger {
	cur := &ledger.Ledger{Version: ledger.Version, Source: filepath.Join(dir, "acpx")}
	prev := &ledger.Ledger{Version: ledger.Version, Source: filepath.Join(dir, "acpx") + " (previous gateway generation)",
		Owner: ledger.Owner{Name: OwnerName, Gone: "the lease is older than the gateway holding " + dir}}
	if current != nil {
		cur.Owner = current.owner(boot, instance)
	} else {
		cur.Owner = ledger.Owner{Name: OwnerName} // unknown: proves nothing either way
	}
	for i := range leases {
		r, err := leases[i].run()
		if err != nil {
			*errs = append(*errs, &ledger.Error{File: cur.Source, Msg: err.Error()})
			continue
		}
		if current != nil && r.StartedAt != nil && r.StartedAt.Before(current.CreatedAt.Add(-2*time.Second)) {
			prev.Runs = append(prev.Runs, r)
		} else {
			cur.Runs = append(cur.Runs, r)
		}
	}
	var out []*ledger.Ledger
	for _, l := range []*ledger.Ledger{cur, prev} {
		if len(l.Runs) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// codexProcess is a row of the codex app-server registry (OpenClaw 2026.9):
// startedAt is "<boot_id>:<startTicks>" on Linux. Key is the row's key.
type codexProcess struct {
	Key    string   `json:"key,omitempty"`
	Parent codexEnd `json:"parent"`
	Child  codexEnd `json:"child"`
}

type codexEnd struct {
	PID       int    `json:"pid"`
	PGID      int    `json:"pgid"`
	StartedAt string `json:"startedAt"`
}

// check says what makes a registry row unusable, if anything.
func (c *codexProcess) check() error {
	if c.Parent.PID <= 0 || c.Child.PID <= 0 {
		return fmt.Errorf("codex app-server %s: want parent and child pids", c.Key)
	}
	return nil
}

// ledger turns a registry row into a ledger whose owner is the registered
// parent: OpenClaw reaps the child only when that parent is dead.
func (c *codexProcess) ledger(source string) (*ledger.Ledger, error) {
	key := c.Key
	if err := c.check(); err != nil {
		return nil, err
	}
	start := func(s string) string {
		if strings.Count(s, ":") == 1 && len(s) > 2 {
			return s
		}
		return "" // macOS's ps lstart text is not an identity we can compare
	}
	return &ledger.Ledger{Version: ledger.Version, Source: source,
		Owner: ledger.Owner{Name: OwnerName, PID: c.Parent.PID, Start: start(c.Parent.StartedAt)},
		Runs: []ledger.Run{{ID: key, Kind: ledger.KindACP, PID: c.Child.PID, PGID: c.Child.PGID, Start: start(c.Child.StartedAt),
			State: ledger.RunRunning, Command: "codex app-server"}},
	}, nil
}

package gather

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Options say what a run reads besides the process table.
type Options struct {
	// Named are the ledger files and state dirs the command line names:
	// the operator's, so one that can't be read is an error (exit 66 or 78).
	Named []string
	// OwnerLedgers are the ledger files the policy's [[owner]] entries name.
	OwnerLedgers []string
	// Discover: the snapshot is this machine's live table, so its state
	// dirs are looked for (never for a fixture's).
	Discover bool
	// Getenv reads reaper's own environment, where each client's OwnDirs
	// may name a state dir (nil: os.Getenv).
	Getenv func(string) string
	// Clients are the agent clients whose state is read.
	Clients client.Set
	// EveryUser reads the state of every user found, also of those who
	// own no process in the table (ledger show lists their runs); a scan
	// leaves those out: a user's state speaks only for that user's
	// processes, and there are none to speak for.
	EveryUser bool
	// Cache, when set, keeps each dir's read for the next run that gives
	// it (a watch's passes): see Cache.
	Cache *Cache
}

// Set is what a run read besides the process table.
type Set struct {
	// Evidence is what the ledgers and the clients' state dirs say.
	scan.Evidence
	// Problems are files that exist but could not be read, other than
	// those named on the command line (which fail the run instead), each
	// with the trees it could speak for. Warnings are what could not be
	// read without casting doubt (configs only classify; files of another
	// owner are not their dir owner's word).
	Problems []Problem
	Warnings []string
	// Read is every discovered state dir a reader went through, and what
	// came of it (reaper doctor lists them).
	Read []DirRead
	// Kept counts the dirs whose read was taken from a Cache, as an
	// earlier pass read them.
	Kept int
}

// DirRead is one discovered state dir and its read: Err is empty when its
// reader, running as the dir's owner, read it and its client judged it.
type DirRead struct {
	Dir
	Err string
	// Skipped says why the dir was not read, when that was by design.
	Skipped string
}

// Problem is state that could not be read, and the doubt it casts.
type Problem struct {
	Msg   string
	Doubt policy.Doubt
	// user, for a dir the run's budget left unread, is whose budget it
	// was (+1; 0 for any other problem): Messages says those once per user.
	user uint64
	// spent: left unread because the run's time for reading ran out;
	// Messages says those once for every user.
	spent bool
}

// Pending is the reading of the state dirs found without the process
// table — the homes' and reaper's own environment's — listed before the
// table is read and started (Start) once it has been, so that their
// readers run while it is scanned.
type Pending struct {
	list    dirList
	first   int // list.dirs[first:] are read by Begin
	reads   *sync.WaitGroup
	readers readers
	// ready is closed by Load once the table is known (snap and boot), and
	// each dir's read is then judged into parts[k], k its index in
	// list.dirs[first:].
	ready chan struct{}
	ctx   context.Context
	snap  *platform.Snapshot
	parts []*Set
	// owners is the table whose owners say which uids' state is read: a
	// uid that owns a process by its /proc dir (Snapshot.OwnsAny; nil:
	// every uid's, Options.EveryUser). revived are the uids of orphans'
	// roots it missed (a set-user-ID process shows its effective uid,
	// root, there): their dirs are read after all (Load). cache and fresh
	// are a watch's (Cache).
	owners    *platform.Snapshot
	revived   map[uint32]bool
	everyUser bool
	cache     *Cache
	fresh     func(uid uint32) bool
}

// Begin lists the state dirs of the homes (every account's, as root) and
// of reaper's own environment, to be read once Start is called. With
// Discover off it lists nothing.
func Begin(ctx context.Context, opts Options) *Pending {
	p := &Pending{readers: newReaders(ctx, opts.Clients), ready: make(chan struct{}), everyUser: opts.EveryUser, cache: opts.Cache}
	if !opts.Discover {
		return p
	}
	for _, path := range opts.Named {
		p.list.add(Dir{Path: filepath.Clean(path), From: "the command line"}) // read by Load: only marked seen
	}
	p.first = len(p.list.dirs)
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, c := range opts.Clients.All() {
		for _, dir := range c.OwnDirs(getenv) {
			if dir == "" {
				continue
			}
			dir = filepath.Clean(dir)
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				if uid, ok := platform.FileUID(fi); ok {
					p.list.add(Dir{Path: dir, UID: uid, From: "reaper's environment", Client: c.Info().Name})
				}
			}
		}
	}
	var homes []account
	if home, err := os.UserHomeDir(); err == nil {
		homes = append(homes, account{Home: home, UID: uint32(os.Geteuid())})
	}
	homes = append(homes, p.readers.accts...)
	listed := map[string]bool{}
	for _, h := range homes {
		if listed[h.Home] {
			continue
		}
		listed[h.Home] = true
		for _, c := range opts.Clients.All() {
			for _, dir := range c.HomeDirs(h.Home, int(h.UID)) {
				if uid, err := platform.DirOwner(dir); err == nil {
					p.list.add(Dir{Path: dir, UID: uint32(uid), From: "a home", Client: c.Info().Name})
				}
			}
		}
	}
	p.ctx = ctx
	return p
}

// Start starts reading the dirs Begin listed, snap being the table read.
// It is called once the process table has been read: on two cores,
// readers running while the table is read slowed the read by more than
// they saved (measured at 10,000 processes with 20 users' state: the stat
// pass took 180 ms instead of 85). With a Cache, the reads wait for Load,
// which knows whose trees the run may act on.
func (p *Pending) Start(snap *platform.Snapshot) {
	if p.ctx == nil || p.reads != nil {
		return
	}
	if !p.everyUser && snap.Self != 0 {
		// Whose state is read is asked of the owners of the /proc/PID
		// dirs, one dir's uid at a time and only until a process of that
		// uid is met (OwnsAny): the real uid (Snapshot.UID) would read a
		// status file each. A dir shows its process's effective uid (not
		// root for one that is not dumpable: only the files inside do,
		// proc(5)); an orphan's root whose effective uid is root and real
		// uid another's (set-user-ID) is caught up with in Load.
		p.owners = snap
	}
	if p.cache != nil && p.fresh == nil {
		return // Load starts them
	}
	p.reads = p.start(p.ctx, p.list.dirs[p.first:], 0)
}

// resolve answers a dir's read without reading it, when it can: a dir of
// a uid that owns no process in the table is not read (its state could
// speak for nothing in it), and a watch's pass takes the read its cache
// kept for a dir of a uid whose state need not be fresh.
func (p *Pending) resolve(d Dir) (readResult, bool) {
	if !p.owns(d.UID) {
		return readResult{dir: d, skip: fmt.Sprintf("not read: uid %d owns no process, so its state speaks for none", d.UID)}, true
	}
	if p.cache != nil && !p.fresh(d.UID) {
		if r, ok := p.cache.get(d); ok {
			return r, true
		}
	}
	return readResult{}, false
}

// owns reports whether uid's state can speak for a process in the table:
// it owns one (or every uid's is read), or an orphan's root was found to
// be its (revive).
func (p *Pending) owns(uid uint32) bool {
	return p.owners == nil || p.revived[uid] || p.owners.OwnsAny(uid)
}

// wait waits for the reads Start started, if any.
func (p *Pending) wait() {
	if p.reads != nil {
		p.reads.Wait()
	}
}

// Abandon lets the reads Begin started end without being judged: the run
// will not Load (its table could not be read).
func (p *Pending) Abandon() {
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}

// start reads dirs, judging each into parts[offset+k] once ready.
func (p *Pending) start(ctx context.Context, dirs []Dir, offset int) *sync.WaitGroup {
	p.parts = append(p.parts, make([]*Set, len(dirs))...)
	parts := p.parts // the slice start's reads write into
	return startReads(ctx, p.byChange(dirs), &p.readers, p.ready, p.resolve, func(k int, r readResult) {
		if p.snap == nil {
			return // abandoned: there is no table to judge it against
		}
		if r.skip != "" && p.revived[r.dir.UID] {
			return // read after all, by Load
		}
		if r.dir.byChange && r.err == nil && r.read != nil {
			if prev, ok := p.cache.prev(r.dir); ok {
				r.read = r.read.Merge(prev.read, r.dir.names())
			}
		}
		p.cache.put(r)
		s := &Set{}
		s.addRead(r, p.snap, p.readers.clients)
		parts[offset+k] = s
	})
}

// byChange marks, of dirs, those a watch's pass reads by change: a dir of
// a uid whose state is read fresh, read by an earlier pass and kept, of a
// client that reads its records by name (Cache.delta).
func (p *Pending) byChange(dirs []Dir) []Dir {
	if p.cache == nil || p.fresh == nil {
		return dirs
	}
	out := make([]Dir, len(dirs))
	for k, d := range dirs {
		out[k] = d
		if !p.fresh(d.UID) {
			continue
		}
		c := p.readers.clients.ByName(d.Client)
		if names, ok := p.cache.delta(d, c != nil && c.Updates()); ok {
			out[k].byChange, out[k].changed = true, strings.Join(names, "\n")
		}
	}
	return out
}

// Load reads the ledgers named on the command line (an invalid one is an
// error), those the policy names, and — when discovering — the state dirs
// Begin found, with those the live processes name: the live owners the
// scan met, every gateway by its process title, and the roots of the
// scan's findings (a dead gateway's survivors name its state dir). A
// state dir a process names is read only if it passes checkNamed for that
// process's real uid. A fixture (a snapshot not of this machine) gets no
// discovered state.
func Load(ctx context.Context, opts Options, pending *Pending, snap *platform.Snapshot, liveOwners, roots []*platform.Process) (*Set, error) {
	set := &Set{}
	fixture := snap.Self == 0
	seen := map[string]bool{}
	if err := set.loadNamed(ctx, opts.Named, seen, snap, pending, fixture); err != nil {
		return nil, err
	}
	set.loadOwnerLedgers(opts.OwnerLedgers, seen)
	// The table is known. The reads are judged against it once ready is
	// closed — only after this goroutine has done with the snapshot below:
	// the snapshot reads details lazily and is not safe to share.
	pending.snap = snap
	if pending.cache != nil {
		pending.fresh = pending.cache.fresh(snap, roots)
	}
	pending.Start(snap)
	if !opts.Discover || fixture {
		close(pending.ready)
		pending.wait()
		return set, nil
	}
	list := &pending.list
	before := len(list.dirs)
	nameDirs(list, opts.Clients, snap, liveOwners, roots)
	set.Warnings = append(set.Warnings, list.refuse...)
	pending.revive(list.dirs[pending.first:before], snap, roots)
	// Judging the readers' output allocates a few MiB that are garbage at
	// once, on a heap the table made large, whose next collection is far:
	// collect sooner while it runs (measured at 20,000 processes with 20
	// users' state, the reaper's peak 17.7 → 16.8 MiB at no measurable
	// cost in time; lowering it for all of Load cost 35 ms).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	close(pending.ready)
	// Wait for the first reads before the second are started: the second
	// grows parts, which the first write into.
	pending.wait()
	pending.start(ctx, list.dirs[before:], before-pending.first).Wait()
	for _, part := range pending.parts {
		set.merge(part)
	}
	pending.cache.done()
	return set, nil
}

// loadNamed reads the ledgers and state dirs named on the command line:
// one that cannot be read fails the run. A fixture's speak for no user.
func (set *Set) loadNamed(ctx context.Context, named []string, seen map[string]bool, snap *platform.Snapshot, pending *Pending, fixture bool) error {
	for _, path := range named {
		path = filepath.Clean(path)
		seen[path] = true
		ev, errs, warnings := readPath(ctx, path, snap, &pending.readers)
		if len(errs) > 0 {
			return errs[0]
		}
		set.Warnings = append(set.Warnings, warnings...)
		if fixture {
			for _, l := range ev.Ledgers {
				l.Speaker = 0 // a fixture's files are not this machine's users' word
			}
		}
		set.Add(ev)
	}
	return nil
}

// loadOwnerLedgers reads the ledgers the policy's owners name, those not
// named on the command line already. One that cannot be read is doubt.
func (set *Set) loadOwnerLedgers(paths []string, seen map[string]bool) {
	for _, path := range paths {
		if seen[path] {
			continue
		}
		seen[path] = true
		fi, err := os.Stat(path)
		if os.IsNotExist(err) {
			continue // the owner has not written one (yet)
		}
		l, err := ledger.ReadFile(path)
		if err != nil {
			// A supervisor's own ledger speaks for its owner's processes: a
			// root-owned one for anyone's, so doubt about it holds back all.
			d := policy.Doubt{All: true}
			if uid, ok := platform.FileUID(fi); ok && uid != 0 {
				d = policy.Doubt{UID: uid}
			}
			set.Problems = append(set.Problems, Problem{Msg: err.Error(), Doubt: d})
			continue
		}
		set.Ledgers = append(set.Ledgers, l)
	}
}

// nameDirs adds to list the state dirs the processes name: the live
// owners, each client's own processes (by their comm), and the roots of
// the findings. One lookup for every process asked, not one made per
// process and client: 10,000 of them at 2,000 orphans.
func nameDirs(list *dirList, cs client.Set, snap *platform.Snapshot, liveOwners, roots []*platform.Process) {
	var asked *platform.Process
	getenv := func(name string) (string, bool) { return snap.Getenv(asked, name) }
	for _, c := range cs.All() {
		named := func(p *platform.Process, what string) {
			asked = p
			dir, from := c.NamedDir(getenv)
			if dir != "" {
				list.addNamed(c.Info().Name, dir, func() uint32 { return snap.UID(p) }, fmt.Sprintf("%s pid %d's %s", what, p.PID, from), from == client.FromHome)
			}
		}
		for _, p := range liveOwners {
			named(p, "live owner")
		}
		// The client's own processes, by their comm: the set's Info is
		// asked once, not for each of 10,000 processes.
		if in := c.Info(); len(in.Comms)+len(in.VersionDirs) > 0 || in.Script != nil {
			for i := range snap.Procs {
				if p := &snap.Procs[i]; in.Own(snap, p) {
					named(p, in.Name)
				}
			}
		}
		for _, p := range roots {
			named(p, "orphan")
		}
	}
}

// revive reads the dirs Start passed over (of dirs, the homes' and
// reaper's own) of a user who owns one of the roots by its real uid, as
// the gate reads it: a user whose every process showed root as its /proc
// dir's owner was passed over by Start, and their state could speak for
// these trees. Their dirs are read now, and Start's passing over is
// dropped.
func (p *Pending) revive(dirs []Dir, snap *platform.Snapshot, roots []*platform.Process) {
	if p.owners == nil {
		return
	}
	skipped := map[uint32][]Dir{} // the dirs Start passed over, by uid
	for _, d := range dirs {
		if !p.owns(d.UID) {
			skipped[d.UID] = append(skipped[d.UID], d)
		}
	}
	if len(skipped) == 0 {
		return
	}
	for _, r := range roots {
		// A process whose /proc dir shows a user runs with that user's
		// effective uid; only root's may be another's in disguise.
		if snap.Owner(r) != 0 {
			continue
		}
		if uid := snap.UID(r); skipped[uid] != nil && !p.owns(uid) {
			if p.revived == nil {
				p.revived = map[uint32]bool{}
			}
			p.revived[uid] = true
			p.list.dirs = append(p.list.dirs, skipped[uid]...)
		}
	}
}

// merge appends what another Set holds.
func (s *Set) merge(o *Set) {
	if o == nil {
		return
	}
	s.Add(o.Evidence)
	s.Problems = append(s.Problems, o.Problems...)
	s.Warnings = append(s.Warnings, o.Warnings...)
	s.Read = append(s.Read, o.Read...)
	s.Kept += o.Kept
}

// addRead takes one discovered dir's read, judged by its client. Whatever
// went wrong is doubt for the uid that owned the dir when it was listed,
// and nobody else.
func (s *Set) addRead(r readResult, snap *platform.Snapshot, cs client.Set) {
	doubt := policy.Doubt{UID: r.dir.UID}
	c := cs.ByName(r.dir.Client)
	var unread *unreadError
	if r.kept {
		s.Kept++
	}
	switch {
	case r.skip != "":
		s.Read = append(s.Read, DirRead{Dir: r.dir, Skipped: r.skip})
		return
	case errors.As(r.err, &unread):
		s.Problems = append(s.Problems, Problem{Msg: fmt.Sprintf("%s (uid %d): %v", r.dir.Path, r.dir.UID, r.err), Doubt: doubt, user: uint64(unread.user) + 1, spent: unread.spent})
		s.Read = append(s.Read, DirRead{Dir: r.dir, Err: r.err.Error()})
		return
	case r.err != nil:
		s.Problems = append(s.Problems, Problem{Msg: fmt.Sprintf("%s: %v", r.dir.Path, r.err), Doubt: doubt})
		s.Read = append(s.Read, DirRead{Dir: r.dir, Err: r.err.Error()})
		return
	case c == nil:
		s.Problems = append(s.Problems, Problem{Msg: fmt.Sprintf("%s: no client %q", r.dir.Path, r.dir.Client), Doubt: doubt})
		s.Read = append(s.Read, DirRead{Dir: r.dir, Err: "no such client"})
		return
	}
	ev, problems, warnings := r.read.Judge(snap)
	s.Warnings = append(s.Warnings, warnings...)
	for _, err := range problems {
		s.Problems = append(s.Problems, Problem{Msg: err.Error(), Doubt: doubt})
	}
	read := DirRead{Dir: r.dir}
	if len(problems) > 0 {
		read.Err = problems[0].Error()
		if len(problems) > 1 {
			read.Err += fmt.Sprintf(" (and %d more)", len(problems)-1)
		}
	}
	s.Read = append(s.Read, read)
	s.Add(ev)
}

// ReadPath reads one path the operator names: a v1 ledger file, or a
// client's state dir (as its owner, in a reader child, when root), and
// returns the ledgers it holds.
func ReadPath(ctx context.Context, path string, cs client.Set) ([]*ledger.Ledger, []error) {
	rd := newReaders(ctx, cs)
	ev, errs, _ := readPath(ctx, filepath.Clean(path), nil, &rd)
	return ev.Ledgers, errs
}

// readPath is ReadPath's evidence, judged against snap (nil: none), with
// the warnings of a state dir: its config, which only classifies, and
// files of another owner, which are not read.
func readPath(ctx context.Context, path string, snap *platform.Snapshot, rd *readers) (scan.Evidence, []error, []string) {
	var ev scan.Evidence
	fi, err := os.Stat(path)
	if err != nil {
		return ev, []error{&ledger.Error{File: path, Msg: "cannot be opened: " + errors.Unwrap(err).Error(), Err: err}}, nil
	}
	if !fi.IsDir() {
		l, err := ledger.ReadFile(path)
		if err != nil {
			return ev, []error{err}, nil
		}
		ev.Ledgers = []*ledger.Ledger{l}
		return ev, nil, nil
	}
	var c client.Client
	for _, k := range rd.clients.All() {
		if k.IsStateDir(path) {
			c = k
			break
		}
	}
	if c == nil {
		var names []string
		for _, k := range rd.clients.All() {
			names = append(names, k.Info().Name)
		}
		return ev, []error{&ledger.Error{File: path, Msg: fmt.Sprintf("a directory that is no known agent client's state dir (%s): name a ledger file", strings.Join(names, ", "))}}, nil
	}
	uid, _ := platform.FileUID(fi)
	r := readAll(ctx, []Dir{{Path: path, UID: uid, From: "the command line", Client: c.Info().Name}}, rd)[0]
	if r.err != nil {
		return ev, []error{&ledger.Error{File: path, Msg: r.err.Error()}}, nil
	}
	return r.read.Judge(snap)
}

// ExpandHome expands a leading ~/ to the home directory of the reaper.
func ExpandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return filepath.Clean(path)
}

// Doubts groups the problems into the plan's doubts: one per user (or for
// all, for root's own ledgers), saying how many files could not be read
// and naming the first.
func (s *Set) Doubts() []policy.Doubt {
	type key struct {
		all bool
		uid uint32
	}
	var order []key
	count := map[key]int{}
	first := map[key]string{}
	for _, p := range s.Problems {
		k := key{p.Doubt.All, p.Doubt.UID}
		if count[k] == 0 {
			order = append(order, k)
			first[k] = p.Msg
		}
		count[k]++
	}
	var out []policy.Doubt
	for _, k := range order {
		whose := "a ledger"
		if !k.all {
			whose = fmt.Sprintf("state of uid %d", k.uid)
		}
		reason := fmt.Sprintf("%s could not be read (%s): a run it owns could be in this tree", whose, first[k])
		if n := count[k]; n > 1 {
			reason = fmt.Sprintf("%s could not be read (%d files; first %s): a run it owns could be in this tree", whose, n, first[k])
		}
		out = append(out, policy.Doubt{Reason: reason, All: k.all, UID: k.uid})
	}
	return out
}

// Messages are the problems' texts, for the report's errors: the dirs the
// run's budget left unread once per user, with how many more there were
// (a user with a subordinate range can name thousands), and those the
// run's time for reading left unread once for all users (a loaded host
// with a thousand users must not make a thousand lines).
func (s *Set) Messages() []string {
	var out []string
	first := map[uint64]int{} // user+1 → its message in out
	more := map[uint64]int{}
	spent, spentAt := 0, -1
	for _, p := range s.Problems {
		if p.spent {
			if spentAt < 0 {
				spentAt = len(out)
				out = append(out, p.Msg)
			} else {
				spent++
			}
			continue
		}
		if p.user == 0 {
			out = append(out, p.Msg)
			continue
		}
		if _, seen := first[p.user]; seen {
			more[p.user]++
			continue
		}
		first[p.user] = len(out)
		out = append(out, p.Msg)
	}
	for u, n := range more {
		out[first[u]] += fmt.Sprintf(" (and %d more state dirs of uid %d's left unread like it: the uids' doubt)", n, u-1)
	}
	if spent > 0 {
		out[spentAt] += fmt.Sprintf(" (and %d more state dirs left unread like it, of any user: each its own uid's doubt)", spent)
	}
	return out
}

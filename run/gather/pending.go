package gather

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/orphanreaper/reaper/platform"
)

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
				if uid, ok := platform.FileUID(dir, fi); ok {
					p.list.add(Dir{Path: dir, UID: uid, From: "reaper's environment", Client: c.Info().Name})
				}
			}
		}
	}
	var homes []account
	if home, err := os.UserHomeDir(); err == nil {
		homes = append(homes, account{Home: home, UID: platform.EUID()})
	}
	homes = append(homes, p.readers.accts...)
	listed := map[string]bool{}
	for _, h := range homes {
		if listed[h.Home] {
			continue
		}
		listed[h.Home] = true
		if _, err := os.Lstat(h.Home); errors.Is(err, fs.ErrNotExist) {
			continue // no home, no client's dir in it: one stat, not one a client (/nonexistent, /var/www)
		}
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

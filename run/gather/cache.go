package gather

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/orphanreaper/reaper/platform"
)

// Cache keeps what each state dir's read decoded to, from one of a
// watch's passes to the next, so that a pass starts no reader child for a
// user whose trees it cannot act on. A pass reads fresh the state of every
// uid that owns a root of the orphaned trees its table shows, and root's
// (which speaks for everyone's) whenever there is one: a tree is only ever
// judged against state read after its table was taken. The other users'
// reads are taken from the cache and judged against the fresh table: they
// name the live owners the watch watches and the advice; a pass whose plan
// would signal on them reads everyone's again first (run.Reap). A dir read
// for the first time is read; one no pass lists any
// more is let go of. Refresh makes the next pass read every dir (the
// watch's first pass, its backstop, a reload), so a change no trigger
// announced is seen within a backstop.
//
// A Cache is for one watch; the reads of one pass are put in it one at a
// time, and it is safe for one pass at a time.
type Cache struct {
	mu    sync.Mutex
	reads map[cacheKey]readResult
	next  map[cacheKey]readResult
	all   bool
	stale map[uint32]bool // uids whose state changed since the last pass
	// changed are the entries of uids' announce dirs made or removed
	// since the last pass, by path: a dir of theirs read before is read
	// by them (Changed). taken is what the pass in flight took of it.
	changed map[uint32]map[string]bool
	taken   struct {
		all     bool
		stale   map[uint32]bool
		changed map[uint32]map[string]bool
	}
	// nRead and nReused count the dirs read and the dirs taken from the
	// cache, since the Cache was made.
	nRead, nReused uint64
}

type cacheKey struct {
	client, path string
	uid          uint32
}

func keyOf(d Dir) cacheKey { return cacheKey{d.Client, d.Path, d.UID} }

// NewCache is an empty cache: its first pass reads every dir.
func NewCache() *Cache { return &Cache{all: true} }

// Counts are how many dirs passes read, and how many they took from the
// cache, since it was made.
func (c *Cache) Counts() (read, reused uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nRead, c.nReused
}

// Refresh makes the next pass read every dir.
func (c *Cache) Refresh() {
	c.mu.Lock()
	c.all = true
	c.mu.Unlock()
}

// Stale makes the next pass read uid's state: it changed (a new entry
// in one of its dirs).
func (c *Cache) Stale(uid uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stale == nil {
		c.stale = map[uint32]bool{}
	}
	if len(c.stale) >= maxStale {
		c.all = true // past the bound, everyone's: as cheap to say
		return
	}
	c.stale[uid] = true
}

// maxStale bounds the uids Stale keeps between passes.
const maxStale = 4096

// maxChanged bounds the changed entries Changed keeps of one uid between
// passes: past it, the uid's state is read whole (Stale).
const maxChanged = 256

// Changed says that an entry was made in or removed from one of uid's
// announce dirs (path: the entry's): the next pass reads uid's state, and
// of a dir it read before, the records changed alone (Dir.Changed) — its
// others are kept from that read. An entry whose name says nothing ("")
// or that cannot be named to a reader is Stale's.
func (c *Cache) Changed(uid uint32, path string) {
	if path == "" || !filepath.IsAbs(path) || strings.ContainsAny(path, "\n\x00") {
		c.Stale(uid)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = map[uint32]map[string]bool{}
	}
	paths := c.changed[uid]
	switch {
	case paths == nil && len(c.changed) >= maxStale:
		c.all = true
		return
	case paths == nil:
		paths = map[string]bool{}
		c.changed[uid] = paths
	case len(paths) >= maxChanged:
		if c.stale == nil {
			c.stale = map[uint32]bool{}
		}
		c.stale[uid] = true // read whole
		return
	}
	paths[filepath.Clean(path)] = true
}

// delta says how d, a dir of a uid whose state this pass reads, is read:
// by the records changed since its last read (names relative to it; none
// at all when nothing in it changed) when that read is kept and its
// client reads by name, whole otherwise.
func (c *Cache) delta(d Dir, updates bool) (names []string, ok bool) {
	if c == nil || !updates {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taken.all || c.taken.stale[d.UID] {
		return nil, false
	}
	prev, kept := c.reads[keyOf(d)]
	if !kept || prev.err != nil || prev.skip != "" || prev.read == nil || !prev.read.Sound() {
		return nil, false // nothing whole to merge into: read whole
	}
	set := map[string]bool{}
	for path := range c.taken.changed[d.UID] {
		if rel, err := filepath.Rel(d.Path, path); err == nil && filepath.IsLocal(rel) {
			set[rel] = true
		}
	}
	for _, rel := range prev.read.Unsettled() {
		set[rel] = true
	}
	names = make([]string, 0, len(set))
	for rel := range set {
		names = append(names, rel)
	}
	sort.Strings(names)
	return names, true
}

// prev is d's read the last pass kept.
func (c *Cache) prev(d Dir) (readResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reads[keyOf(d)]
	return r, ok
}

// fresh returns whether a uid's state must be read in the pass whose
// orphaned trees' roots are roots.
func (c *Cache) fresh(snap *platform.Snapshot, roots []*platform.Process) func(uid uint32) bool {
	c.mu.Lock()
	all, stale, changed := c.all, c.stale, c.changed
	c.all, c.stale, c.changed = false, nil, nil // taken by this pass: what comes in the meantime is the next pass's
	c.taken.all, c.taken.stale, c.taken.changed = all, stale, changed
	c.mu.Unlock()
	if all {
		return func(uint32) bool { return true }
	}
	// The roots' owners, by their /proc dirs (a statx each), as Start
	// chooses whose state to read.
	uids := map[uint32]bool{}
	for _, p := range roots {
		uids[snap.Owner(p)] = true
	}
	if len(uids) > 0 {
		uids[0] = true // root's state speaks for every user's trees
	}
	for uid := range stale {
		uids[uid] = true
	}
	for uid := range changed {
		uids[uid] = true
	}
	return func(uid uint32) bool { return uids[uid] }
}

// get is the read kept for d, if any; it is kept for the next pass too.
func (c *Cache) get(d Dir) (readResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.reads[keyOf(d)]
	if ok {
		c.nReused++
		r.dir = d
		c.keep(r)
		r.kept = true
	}
	return r, ok
}

// put keeps a dir's read for the next pass (nil: no cache).
func (c *Cache) put(r readResult) {
	if c == nil || r.skip != "" || r.kept {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nRead++
	c.keep(r)
}

func (c *Cache) keep(r readResult) {
	if c.next == nil {
		c.next = map[cacheKey]readResult{}
	}
	c.next[keyOf(r.dir)] = r
}

// done ends a pass: what it listed is what the next pass may take, and
// nothing else is kept (nil: no cache).
func (c *Cache) done() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads, c.next = c.next, nil
}

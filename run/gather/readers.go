package gather

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/child"
)

// group is the state dirs of one uid, read by one child, and what the
// child said of them (states) or why it failed (err).
type group struct {
	uid   uint32
	gid   uint32
	dirs  []Dir
	reads [][]byte // each dir's read, as the child printed it
	err   error
}

// readResult is one dir's read: what its client's Read returned, as its
// Decode made it, or why it could not be read.
type readResult struct {
	dir  Dir
	read client.Decoded
	err  error
	skip string // why it was not read, by design (Pending.resolve)
	kept bool   // taken from a Cache, not read in this run
}

// readAll reads the dirs and returns each one's read, in order.
func readAll(ctx context.Context, dirs []Dir, rd *readers) []readResult {
	out := make([]readResult, len(dirs))
	ready := make(chan struct{})
	close(ready)
	startReads(ctx, dirs, rd, ready, nil, func(k int, r readResult) { out[k] = r }).Wait()
	return out
}

// readers is how a run reads users' state with the clients it knows: as
// root in reader children, within one budget for the run (budget), each
// as the account's group; otherwise in this process.
type readers struct {
	clients client.Set
	asRoot  bool
	accts   []account
	budget  *readBudget
}

// newReaders is how a run of this process, with clients cs, reads users'
// state (the accounts and the budget only as root).
func newReaders(ctx context.Context, cs client.Set) readers {
	rd := readers{clients: cs, asRoot: os.Geteuid() == 0}
	if rd.asRoot {
		rd.accts = accounts()
		rd.budget = newBudget(ctx, rd.accts)
	}
	return rd
}

// startReads hands each dir's read to fn (k is its index in dirs) once
// ready is closed, one call at a time. A dir resolve answers (nil: none)
// is not read; the others are read by readDirs.
func startReads(ctx context.Context, dirs []Dir, rd *readers, ready <-chan struct{}, resolve func(Dir) (readResult, bool), fn func(k int, r readResult)) *sync.WaitGroup {
	var wg sync.WaitGroup
	var mu sync.Mutex
	hand := func(k int, r readResult) {
		select {
		case <-ready:
		case <-ctx.Done():
			r = readResult{dir: r.dir, err: fmt.Errorf("not used: %w", context.Cause(ctx))}
			<-ready // fn needs what ready announces
		}
		mu.Lock()
		defer mu.Unlock()
		fn(k, r)
	}
	var toRead []Dir
	var at, known []int
	var answers []readResult
	for k, d := range dirs {
		if resolve != nil {
			if r, ok := resolve(d); ok {
				known, answers = append(known, k), append(answers, r)
				continue
			}
		}
		toRead, at = append(toRead, d), append(at, k)
	}
	if len(known) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range known {
				hand(k, answers[i])
			}
		}()
	}
	readDirs(ctx, toRead, rd, &wg, func(i int, r readResult) { hand(at[i], r) })
	return &wg
}

// readDirs reads the dirs — as root, one child per uid (at most
// maxChildren at once, each within ChildDeadline and ctx, in the turns and
// the shares of the run's budget) running as that uid, but root's own
// dirs that no other user can write to in this process; as anyone else,
// in this process (it reads only what its own user may) — and hands each
// dir's read to hand (i is its index in dirs), adding what it starts to
// wg. A child's output is read into one of maxChildren buffers used again
// and again and decoded at once; what it said waits for hand, and is let
// go of once hand has had it (hand keeps what it judges worth keeping).
func readDirs(ctx context.Context, dirs []Dir, rd *readers, wg *sync.WaitGroup, hand func(i int, r readResult)) {
	var here, foreign []int
	var groups []*group
	byUID := map[uint32]*group{}
	index := map[Dir]int{}
	me := platform.EUID()
	for k, d := range dirs {
		if !rd.asRoot && d.UID != me && !child.Available() {
			// No reader child here can run as the dir's user, and this
			// process parses no other user's files: their processes'
			// state is not read (a doubt, never a kill).
			foreign = append(foreign, k)
			continue
		}
		if !rd.asRoot || ownPrivate(d) {
			here = append(here, k)
			continue
		}
		index[d] = k
		g := byUID[d.UID]
		if g == nil {
			g = &group{uid: d.UID, gid: gidOf(rd.accts, d.UID)}
			byUID[d.UID] = g
			groups = append(groups, g)
		}
		g.dirs = append(g.dirs, d)
	}
	if len(foreign) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range foreign {
				hand(k, readResult{dir: dirs[k], err: fmt.Errorf("uid %d's state: not read by uid %d on %s, where no reader child runs as its user", dirs[k].UID, me, runtime.GOOS)})
			}
		}()
	}
	if len(here) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range here {
				d := dirs[k]
				r := readResult{dir: d}
				switch c := rd.clients.ByName(d.Client); {
				case c == nil:
					r.err = fmt.Errorf("no client %q", d.Client)
				case d.byChange:
					r.read = c.Decode(c.ReadChanged(d.Path, d.names()), d.Path, d.UID)
				default:
					r.read = c.Decode(c.Read(d.Path), d.Path, d.UID)
				}
				hand(k, r)
			}
		}()
	}
	if len(groups) == 0 {
		return
	}
	slots := make(chan []byte, maxChildren)
	for range maxChildren {
		slots <- make([]byte, 0, 64<<10) // a user's state is tens of KiB: grown rarely
	}
	groups = rd.budget.order(groups)
	for _, g := range groups {
		g.err = rd.budget.admit(g.uid)
	}
	// The children start in the budget's order: a slot is taken before
	// each is started, so a user's many uids wait behind everyone's first.
	wg.Add(len(groups))
	go func() {
		for _, g := range groups {
			buf := <-slots
			go func() {
				defer wg.Done()
				buf = readGroup(ctx, g, rd, buf)
				// Each dir's read is decoded now, while the table is
				// scanned; only its judging waits for the table.
				reads := make([]readResult, len(g.dirs))
				for i, d := range g.dirs {
					reads[i] = readResult{dir: d, err: g.err}
					switch c := rd.clients.ByName(d.Client); {
					case g.err != nil:
					case c == nil:
						reads[i].err = fmt.Errorf("no client %q", d.Client)
					default:
						reads[i].read = c.Decode(g.reads[i], d.Path, g.uid)
					}
				}
				// The reads were slices of buf: it goes to the next child
				// only now, when they are decoded (Decode copies what it
				// keeps).
				g.reads = nil
				slots <- buf // the next child may run while this one waits for the table
				for i, d := range g.dirs {
					hand(index[d], reads[i])
				}
			}()
		}
	}()
}

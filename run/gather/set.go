package gather

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

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
			if uid, ok := platform.FileUID(path, fi); ok && uid != 0 {
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

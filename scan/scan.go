package scan

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// MaxOwners bounds the [[owner]] entries a scan knows: each process caches
// which owner it is in 16 bits. An 8-bit cache once wrapped at 127 owners
// and let a live owner's process be reported as a finding.
const MaxOwners = 4096

// Result is what one scan found.
type Result struct {
	Tree     *Tree
	Findings []Finding // by root pid
	Zombies  []Zombie
	Unknown  []Unknown
	// Ledger is every run the applied ledgers name, with what it maps to.
	Ledger []LedgerRun
	// Advice is configuration the operator should change (Advise).
	Advice []Advice
	// Ignored counts the claims users' state made about other users'
	// processes, which were dropped (speaks).
	Ignored []Ignored

	cfg       Config
	servers   *serverIndex // the clients' declared servers (ApplyServers)
	sessions  []Session    // the sessions the clients' records name (apply), for the server-set advice
	owner     []int16      // per process: 0 not yet known, 1 none, 2+k owner k (k < MaxOwners)
	subreaper []int8       // per process: 0 not yet known, 1 no, 2 yes
	owned     map[int]string
	// openStdin are the findings' roots whose stdin is open (ApplyStdin),
	// until ResolveInUse has asked who writes to it; inUse are those a
	// live process outside their tree can still write to, pid → why: not
	// findings.
	openStdin map[int]platform.Stdin
	inUse     map[int]string
	// live are the roots that are a live client's own process, reparented
	// and nothing more (ApplyLiveClients), pid → why: sessions, not
	// findings.
	live map[int]string
	// stdinDoubt are the findings whose writer search did not finish
	// (ResolveInUse): held back for the pass.
	stdinDoubt map[int]string
}

// A scan is two phases, which a run calls in turn with its evidence read
// between them:
//
//	r := scan.Table(snap, cfg)            // the orphaned trees of the table alone
//	ev := read(r.LiveOwners(), r.Roots())  // what the owners and roots lead to
//	r.Attribute(ev)                        // folded in, in the one right order
//
// Table reads details only for roots whose parent is init or a subreaper,
// for their ancestors, and for the owner pids they name.

// Table is a scan's first phase: the tree of snap and the orphaned trees
// in it, nothing attributed yet.
func Table(snap *platform.Snapshot, cfg Config) *Result { return scanTable(snap, cfg) }

// Roots are the roots of the orphaned trees Table found: with
// LiveOwners, whose state a run reads before Attribute.
func (r *Result) Roots() []*platform.Process {
	roots := make([]*platform.Process, len(r.Findings))
	for k := range r.Findings {
		roots[k] = r.Findings[k].Root
	}
	return roots
}

// Attribute is a scan's second phase: the evidence folded in (apply, in
// the one order that is right), then the leftovers in the containers of
// the MSIX apps the policy names, then who is attached to each root's
// stdin, then the live clients' own processes taken out (a session is no
// finding). Evidence{} attributes by the clients' marks alone.
func (r *Result) Attribute(ev Evidence) {
	r.apply(ev)
	r.ApplyContainers()
	r.ApplyStdin()
	r.ApplyLiveClients()
}

// Scan is both phases in one call, for tests and tools that hold their
// evidence already: gather (nil: none) is given the live owners and the
// roots, and its error ends the scan.
func Scan(snap *platform.Snapshot, cfg Config, gather Gather) (*Result, error) {
	r := Table(snap, cfg)
	var ev Evidence
	if gather != nil {
		var err error
		if ev, err = gather(r.LiveOwners(), r.Roots()); err != nil {
			return nil, err
		}
	}
	r.Attribute(ev)
	return r, nil
}

// scanTable is Scan's first step: the orphaned trees of the table alone.
func scanTable(snap *platform.Snapshot, cfg Config) *Result {
	if len(cfg.Owners) > MaxOwners {
		// The policy loader refuses more; a Config built in Go is cut
		// here rather than letting an index wrap into another owner's.
		cfg.Owners = cfg.Owners[:MaxOwners]
	}
	r := &Result{
		Tree:      NewTree(snap),
		cfg:       cfg,
		owner:     make([]int16, len(snap.Procs)),
		subreaper: make([]int8, len(snap.Procs)),
		owned:     map[int]string{},
	}
	snap.Prefetch(r.likelyRoots())
	var roots []int32
	for i := range snap.Procs {
		p := &snap.Procs[i]
		if p.KernelThread() {
			continue
		}
		if p.Zombie() {
			z := Zombie{Proc: p}
			if j := r.Tree.Parent(i); j >= 0 {
				z.Parent = &snap.Procs[j]
			}
			r.Zombies = append(r.Zombies, z)
			continue
		}
		parent := r.Tree.Parent(i)
		if parent < 0 && p.ParentGone() {
			// Windows never reparents: the orphan keeps its dead parent's
			// pid. It is a root as a reparented one is, unless it is an
			// owner itself.
			if r.ownerOf(i) < 0 {
				roots = append(roots, int32(i))
			}
			continue
		}
		if parent < 0 {
			// PID 1 has ppid 0. Anyone else with ppid 0 was entered into this
			// namespace from outside (setns); a ppid we can't see is hidden.
			// Windows' System and the processes a host starts under wine
			// record none.
			if p.PID != 1 && !snap.NoReparenting {
				r.Unknown = append(r.Unknown, Unknown{Proc: p})
			}
			continue
		}
		if !r.adopts(parent) || r.IsSubreaper(i) || r.ownerOf(i) >= 0 || r.insideLiveOwner(i) {
			continue
		}
		if there, _ := r.startedThere(i, parent); there {
			continue
		}
		roots = append(roots, int32(i))
	}
	// The roots first, then findings made to fit: a finding is 168 bytes,
	// and growing a slice to 2,000 of them allocated 1.3 MiB.
	r.Findings = make([]Finding, 0, len(roots))
	for _, i := range roots {
		r.Findings = append(r.Findings, r.finding(int(i), r.adoptionOf(int(i))))
	}
	return r
}

// likelyRoots lists the processes whose parent may adopt orphans, judged
// without reading a file: PID 1, a process named systemd, or one whose comm
// a [[subreaper]] prefilter matches. Their details will be read, so they
// are read up front, in parallel. (A subreaper without a comm prefilter is
// found lazily, one read per parent.)
func (r *Result) likelyRoots() []*platform.Process {
	s := r.Tree.Snap
	var out []*platform.Process
	for i := range s.Procs {
		p := &s.Procs[i]
		j := r.Tree.Parent(i)
		if j < 0 || p.KernelThread() || p.Zombie() {
			continue
		}
		if pp := &s.Procs[j]; pp.PID == 1 || pp.Comm == "systemd" || r.subreaperComm(pp.Comm) || minimalInit(pp.Comm) || pp.Comm == "reaper" {
			out = append(out, p)
		}
	}
	return out
}

func (r *Result) subreaperComm(comm string) bool {
	for _, sr := range r.cfg.Subreapers {
		if sr.Comm != nil && sr.Comm.MatchString(comm) {
			return true
		}
	}
	return false
}

// adopts reports whether the process at index parent adopts orphans.
func (r *Result) adopts(parent int) bool {
	return r.Tree.Snap.Procs[parent].PID == 1 || r.IsSubreaper(parent)
}

// adoptionOf says in words why the root at index i has lost its parent:
// how its adopter adopts orphans, or, where nothing adopts (Windows), that
// the parent it recorded is gone.
func (r *Result) adoptionOf(i int) string {
	p := &r.Tree.Snap.Procs[i]
	if !p.ParentGone() {
		return r.adoption(r.Tree.Parent(i))
	}
	if j := r.Tree.Snap.Index(p.PPID); j >= 0 {
		q := &r.Tree.Snap.Procs[j]
		return fmt.Sprintf("its parent %d exited; the pid now names a younger process (%s, started after this one)", p.PPID, q.Comm)
	}
	return fmt.Sprintf("its parent %d exited (Windows keeps the dead parent's pid; no process has it now)", p.PPID)
}

// adoption says in words how the process at index parent adopts orphans.
func (r *Result) adoption(parent int) string {
	p := &r.Tree.Snap.Procs[parent]
	if p.PID == 1 {
		return "its parent is PID 1 (" + p.Comm + ")"
	}
	if r.containerInit(p) {
		return fmt.Sprintf("its parent %d (%s) is a container's init, PID 1 of its own PID namespace (the clients' records inside the container name the container's pids: they are not read from here)", p.PID, p.Comm)
	}
	return fmt.Sprintf("its parent %d (%s) is a subreaper", p.PID, p.Comm)
}

// IsSubreaper reports whether the process at index i adopts orphans: a
// systemd user manager (which calls PR_SET_CHILD_SUBREAPER, systemd
// src/core/main.c) or a process a [[subreaper]] rule names. The kernel does
// not expose the subreaper flag in procfs, so this is by command line.
func (r *Result) IsSubreaper(i int) bool {
	if r.subreaper[i] == 0 {
		r.subreaper[i] = 1
		if r.matchesSubreaper(&r.Tree.Snap.Procs[i]) {
			r.subreaper[i] = 2
		}
	}
	return r.subreaper[i] == 2
}

func (r *Result) matchesSubreaper(p *platform.Process) bool {
	if p.PID == 1 || p.KernelThread() || p.Zombie() {
		return false
	}
	s := r.Tree.Snap
	if p.Comm == "systemd" {
		for _, a := range s.Cmdline(p) {
			if a == "--user" {
				return true
			}
		}
	}
	for _, sr := range r.cfg.Subreapers {
		if sr.Comm != nil && !sr.Comm.MatchString(p.Comm) {
			continue
		}
		if sr.Cmdline.MatchString(s.CommandLine(p)) {
			return true
		}
	}
	return r.containerInit(p)
}

// containerInit reports whether p is a minimal init (tini, docker-init,
// dumb-init, catatonit, reaper run) that is PID 1 of a PID namespace of
// its own: a container's init, which adopts the container's orphans as
// PID 1 does the host's. Only such inits' status is read for it.
func (r *Result) containerInit(p *platform.Process) bool {
	s := r.Tree.Snap
	return (minimalInit(p.Comm) || reaperRun(s, p)) && s.NamespaceInit(p)
}

// ownerOf returns the index in Config.Owners of the owner the live process
// at index i is, or -1.
func (r *Result) ownerOf(i int) int {
	if r.owner[i] == 0 {
		r.owner[i] = 1
		p := &r.Tree.Snap.Procs[i]
		if !p.KernelThread() && !p.Zombie() && len(r.cfg.Owners) > 0 {
			if k := r.cfg.OwnerIndex(r.Tree.Snap.CommandLine(p)); k >= 0 {
				r.owner[i] = int16(2 + k)
			}
		}
	}
	return int(r.owner[i]) - 2
}

// LiveOwner returns the name of the owner p is, if it is a live owner.
func (r *Result) LiveOwner(p *platform.Process) (string, bool) {
	i := r.Tree.Snap.Index(p.PID)
	if i < 0 {
		return "", false
	}
	if k := r.ownerOf(i); k >= 0 {
		return r.cfg.Owners[k].Name, true
	}
	return "", false
}

// insideLiveOwner reports whether a live owner is an ancestor of i: then
// the owner (or its own subreaper) still holds the tree.
func (r *Result) insideLiveOwner(i int) bool {
	inside := false
	r.Tree.Ancestors(i, func(j int) bool {
		inside = r.ownerOf(j) >= 0
		return !inside
	})
	return inside
}

// finding collects the reasons, evidence and members of the tree at root.
func (r *Result) finding(root int, adoption string) Finding {
	s := r.Tree.Snap
	p := &s.Procs[root]
	f := Finding{Root: p, Reasons: []Reason{Reparented}, Evidence: []string{adoption}}
	r.attribute(&f)
	if f.Owner == "" {
		f.Reasons = append(f.Reasons, Untracked)
		f.Evidence = append(f.Evidence, untrackedEvidence)
		if s.EnvironUnreadable(p) {
			f.Evidence = append(f.Evidence, "its environment could not be read (another user's process; run as root): an owner's marker there was not checked")
		}
	}
	if why := s.ReadInPart(p); why != "" {
		f.Evidence = append(f.Evidence, why+": only what was read was matched")
	}
	f.Kind = r.cfg.Classify(s, p)
	r.members(&f, root)
	r.supervised(&f)
	return f
}

const untrackedEvidence = "no owner's marker, cgroup or ledger claims it"

// claimed drops untracked, and the evidence that said so, from a finding
// an owner's marker, tie or ledger now claims.
func (f *Finding) claimed() {
	f.Reasons = slices.DeleteFunc(f.Reasons, func(x Reason) bool { return x == Untracked })
	f.Evidence = slices.DeleteFunc(f.Evidence, func(e string) bool { return e == untrackedEvidence })
}

// members fills in the tree of f rooted at index root, with its total RSS.
// It counts them first, so that a tree of thousands is one allocation of
// its size rather than a slice grown to it (at 20,000 processes in one
// orphaned tree: 1.2 MiB allocated → 0.3).
func (r *Result) members(f *Finding, root int) {
	s := r.Tree.Snap
	member := func(m *platform.Process) bool { return !m.Zombie() && !m.KernelThread() }
	n := 0
	r.Tree.Walk(root, func(i, _ int) {
		if member(&s.Procs[i]) {
			n++
		}
	})
	f.Members = slices.Grow(f.Members, n)
	r.Tree.Walk(root, func(i, depth int) {
		if m := &s.Procs[i]; member(m) {
			f.Members = append(f.Members, Member{Proc: m, Depth: depth})
			f.RSS += m.RSS
		}
	})
}

// attribute ties the root of f to an owner by the owner's pid marker in its
// environment and by the owner's unit cgroup, and adds owner-dead when the
// owner that evidence names is gone.
func (r *Result) attribute(f *Finding) {
	s := r.Tree.Snap
	dead := false
	for k, o := range r.cfg.Owners {
		if o.PIDEnv != "" {
			if v, ok := s.Getenv(f.Root, o.PIDEnv); ok {
				f.Owner = o.Name
				pid, err := strconv.Atoi(v)
				if err != nil || pid <= 0 {
					f.Evidence = append(f.Evidence, fmt.Sprintf("%s=%q is not a pid", o.PIDEnv, v))
				} else {
					f.OwnerPID = pid
					if why, alive := r.ownerAlive(pid, k, f.Root); !alive {
						dead = true
						f.Evidence = append(f.Evidence, fmt.Sprintf("%s=%d: %s", o.PIDEnv, pid, why))
					}
				}
			}
		}
		if o.Cgroup != nil {
			cg := s.Cgroup(f.Root).Path()
			if cg != "" && o.Cgroup.MatchString(cg) {
				f.Owner = o.Name
				if !r.cgroupHasOwner(cg, k, f.Root) {
					dead = true
					f.Evidence = append(f.Evidence, fmt.Sprintf("cgroup %s has no live %s", cg, o.Name))
				}
			}
		}
		if f.Owner != "" {
			break
		}
	}
	if f.Owner != "" {
		f.spoken(s.UID(f.Root)) // its own marker or unit
	}
	if dead {
		f.Reasons = append(f.Reasons, OwnerDead)
	}
}

// ownerAlive reports whether pid, which marked names as its owner, is a
// live process that is owner k, and if not, why not. A process at that
// pid proves the owner alive only when it can be the one that marked
// marked: of marked's user or root — a user can take any free pid (pid
// reuse) and title a process like the owner, and that must not shield
// another user's orphan — and started no later than marked, which its
// owner spawned (or whose ancestor it spawned).
func (r *Result) ownerAlive(pid, k int, marked *platform.Process) (string, bool) {
	s := r.Tree.Snap
	i := s.Index(pid)
	if i < 0 {
		return "no such process", false
	}
	q := &s.Procs[i]
	if q.Zombie() {
		return "exited (zombie)", false
	}
	if r.ownerOf(i) != k {
		return fmt.Sprintf("pid now belongs to %q, not %s", s.CommandLine(q), r.cfg.Owners[k].Name), false
	}
	if why := r.notItsOwner(q, marked, true); why != "" {
		return why, false
	}
	return "", true
}

// notItsOwner says why q, a live process that looks like an owner, cannot
// be the owner that spawned marked, or "": another user's (but root's),
// or — by a pid, which any process may come to hold — younger than
// marked.
func (r *Result) notItsOwner(q, marked *platform.Process, byPID bool) string {
	s := r.Tree.Snap
	if uid, own := s.UID(q), s.UID(marked); uid != 0 && uid != own {
		return fmt.Sprintf("pid now belongs to a process of uid %s, not of uid %s whose process the marker is on (pid reuse)", uidText(uid), uidText(own))
	}
	if byPID && q.StartTicks > marked.StartTicks {
		return fmt.Sprintf("pid now belongs to %q, which started %s after the process the marker is on (pid reuse)", clip(s.CommandLine(q), 80),
			(s.Age(marked) - s.Age(q)).Round(time.Second))
	}
	return ""
}

// cgroupHasOwner reports whether a live owner k sits in cgroup path that
// can be the owner of marked: of its user or root (notItsOwner; a unit's
// cgroup is no pid that any process may take, so a gateway restarted in
// its unit is still its owner, as before).
func (r *Result) cgroupHasOwner(path string, k int, marked *platform.Process) bool {
	s := r.Tree.Snap
	for _, pid := range s.CgroupMembers(path) {
		if i := s.Index(pid); i >= 0 && r.ownerOf(i) == k && r.notItsOwner(&s.Procs[i], marked, false) == "" {
			return true
		}
	}
	return false
}

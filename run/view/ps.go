package view

import (
	"slices"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// PS is `reaper ps`, a view of the pass: the agent sessions on the
// machine, each a live client process with its tree, then the findings no
// live session holds (the orphans), then totals.
//
// A session is found two ways, and each process counts once:
//
//   - a client's own record (a Claude Code session file, a Copilot CLI
//     lock, a declared client's session file, a ledger's owner) names a
//     pid that is still that record's process (scan.OwnerGone: its start
//     and its user's — a user's record speaks only for that user's
//     processes); a record whose process is gone is an ended session,
//     shown when it left orphans behind;
//   - a process titled as a client's own (Info.Comms: claude, codex …)
//     whose parent is not, that no record names.
//
// A session's tree is its descendants down to the next session (a client
// started inside another's shell is a session of its own); a finding
// rooted inside it is a leak of that live session (a superseded server,
// an abandoned job). As an ordinary user, only that user's sessions and
// orphans are shown. Memory is PSS where it can be read, else RSS.
func PS(p *run.Pass) *audit.PSView {
	b := sessionTrees(p, true)
	b.orphans()
	v := &audit.PSView{SchemaVersion: 1, Processes: len(b.s.Procs), AsRoot: b.uid == 0, Memory: "pss",
		Sessions: []audit.PSSession{}, Orphans: []audit.PSOrphan{}, Clients: []audit.PSTotal{}, Warnings: []string{}}
	if !b.pss {
		v.Memory = "rss"
	}
	v.Sessions = append(v.Sessions, b.sessions...)
	for _, s := range b.ended {
		if len(s.Leftovers) > 0 {
			v.Sessions = append(v.Sessions, s)
		}
	}
	v.Orphans = append(v.Orphans, b.orphanList...)
	v.Copies = b.copies(v.Sessions)
	v.Warnings = append(v.Warnings, p.Problems...)
	v.Headroom = b.headroom()
	for _, h := range v.Headroom {
		if w := h.Warning(); w != "" {
			v.Warnings = append(v.Warnings, w)
		}
	}
	b.totals(v)
	v.Sort("memory")
	return v
}

// LiveFigures is what a watch's pass adds to its metrics of the live sessions:
// the servers several run a copy of, and each user's headroom. The
// copies' memory is PSS, as ps shows it, read for their processes alone
// (PSS is a read per process: the sessions' other processes are not
// asked).
func LiveFigures(p *run.Pass) ([]audit.ServerCopies, []audit.Headroom) {
	b := sessionTrees(p, false)
	dups := b.copies(b.sessions)
	b.copiesPSS(dups)
	return dups, b.headroom()
}

// headroom is each user's in the view's scope (audit.ReadHeadroom).
func (b *psBuild) headroom() []audit.Headroom {
	return audit.ReadHeadroom(b.s, func(uid uint32) bool { return b.uid == 0 || uid == b.uid })
}

// sessionTrees finds the sessions and fills each live one from its tree,
// with each process's PSS where pss asks (else RSS).
func sessionTrees(p *run.Pass, pss bool) *psBuild {
	b := &psBuild{p: p, s: p.Snap, res: p.Result, uid: p.UID(), anchor: map[int]int{}, endedAt: map[string]int{}, clients: clientNames(p.Config.Clients),
		cfg: p.Config.Policy.ScanConfig(), pss: true}
	for _, c := range p.Config.Clients.All() {
		if in := c.Info(); len(in.VersionDirs) > 0 || in.Script != nil {
			b.native = append(b.native, nativeClient{in.ClientMark(), in.Name})
		}
	}
	b.findings()
	b.records()
	b.byTitle()
	// The trees first, reading nothing; then what showing them needs, read
	// on several goroutines (command lines, PSS); then the view.
	trees := make([][]node, len(b.sessions))
	var all []*platform.Process
	for i := range b.sessions {
		trees[i] = b.walk(b.sessions[i].PID)
		for _, n := range trees[i] {
			all = append(all, n.p)
		}
	}
	if pss {
		for _, it := range b.p.Plan.Items {
			for _, m := range it.Finding.Members {
				all = append(all, m.Proc)
			}
		}
	}
	b.s.Load(all, false)
	if pss {
		b.pssOf = b.s.PSSOf(all)
	}
	for i := range b.sessions {
		b.tree(&b.sessions[i], trees[i])
	}
	return b
}

// psBuild is one PS view in the making.
type psBuild struct {
	p   *run.Pass
	s   *platform.Snapshot
	res *scan.Result
	uid uint32
	// anchor maps the pid of each live session's process to its index in
	// sessions; rootOf maps a finding's root pid to its index.
	anchor     map[int]int
	rootOf     map[int]int
	sessions   []audit.PSSession
	ended      []audit.PSSession
	endedAt    map[string]int // client@pid → its index in ended
	orphanList []audit.PSOrphan
	// held: the findings inside a live session's tree.
	held    map[int]bool
	clients map[string]clientName
	// pss: every process's PSS was read (else RSS stands in for some).
	pss   bool
	pssOf map[int]uint64
	cfg   scan.Config
	// native are the clients whose native binary titles itself with its
	// version (Info.VersionDirs), or that are a node script (Info.Script):
	// asked once, not of every process.
	native []nativeClient
}

// orphans lists the findings no live session holds, in the view's scope,
// each tied to the ended session that left it where a record names one.
func (b *psBuild) orphans() {
	endedBy := map[int]int{}
	for k, e := range b.ended {
		endedBy[e.PID] = k
	}
	for i, it := range b.p.Plan.Items {
		f := it.Finding
		if b.held[i] || !b.mine(f.Root) {
			continue
		}
		cn := b.client(f.Owner)
		if f.Owner == "" {
			cn = clientName{}
		}
		o := audit.PSOrphan{RootPID: f.Root.PID, Kind: string(f.Kind), Reasons: reasons(f), Owner: f.Owner, Client: cn.name,
			Processes: []audit.PSProcess{}}
		o.UID, o.User = b.user(f.Root)
		if it.Rule != nil {
			o.Rule, o.Action = it.Rule.Name, string(it.Action)
		}
		if it.Outcome == policy.Protected {
			o.Protected = it.Detail
		}
		for _, m := range f.Members {
			pr := b.process(m.Proc, m.Depth)
			if m.Depth == 0 {
				pr.Kind, pr.Name = string(f.Kind), ""
			}
			o.Processes = append(o.Processes, pr)
			o.MemoryBytes += pr.MemoryBytes
		}
		if k, ok := endedBy[f.OwnerPID]; ok && f.OwnerPID > 0 && b.client(f.Owner).name == b.ended[k].Client {
			e := &b.ended[k]
			o.SessionID = e.SessionID
			e.Leftovers = append(e.Leftovers, f.Root.PID)
			e.MemoryBytes += o.MemoryBytes
			e.Processes = nil
		}
		b.orphanList = append(b.orphanList, o)
	}
	for k := range b.ended {
		if b.ended[k].Processes == nil {
			b.ended[k].Processes = []audit.PSProcess{}
		}
		if uid := b.ended[k].Speaker; uid >= 0 {
			b.ended[k].UID, b.ended[k].User = uid, policy.UserName(uint32(uid))
		}
	}
}

// totals sums per client (in the order the clients first appear) and for
// the machine.
func (b *psBuild) totals(v *audit.PSView) {
	by := map[string]*audit.PSTotal{}
	var order []string
	get := func(c string) *audit.PSTotal {
		if c == "" {
			c = "(no client)"
		}
		if t, ok := by[c]; ok {
			return t
		}
		by[c] = &audit.PSTotal{Client: c}
		order = append(order, c)
		return by[c]
	}
	for _, s := range v.Sessions {
		if s.State == "ended" {
			continue
		}
		t := get(s.Client)
		t.Sessions++
		t.Processes += len(s.Processes)
		t.MemoryBytes += s.MemoryBytes
	}
	for _, o := range v.Orphans {
		t := get(o.Client)
		t.Orphans++
		t.OrphanProcess += len(o.Processes)
		t.OrphanBytes += o.MemoryBytes
	}
	slices.Sort(order)
	for _, c := range order {
		t := *by[c]
		v.Clients = append(v.Clients, t)
		v.Total.Sessions += t.Sessions
		v.Total.Processes += t.Processes
		v.Total.MemoryBytes += t.MemoryBytes
		v.Total.Orphans += t.Orphans
		v.Total.OrphanProcess += t.OrphanProcess
		v.Total.OrphanBytes += t.OrphanBytes
	}
}

package view

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
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
	v.Duplicates = b.duplicates(v.Sessions)
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
func LiveFigures(p *run.Pass) ([]audit.PSDuplicate, []audit.Headroom) {
	b := sessionTrees(p, false)
	dups := b.duplicates(b.sessions)
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

// clientName is a client as people call it, and how it registers an MCP
// server by URL (client.Info.RemoteServer).
type clientName struct{ name, title, remote string }

// clientNames maps every owner name and process title a client's
// evidence carries to the client.
func clientNames(set client.Set) map[string]clientName {
	out := map[string]clientName{}
	for _, c := range set.All() {
		info := c.Info()
		cn := clientName{info.Name, info.Title, info.RemoteServer}
		out["info:"+info.Name] = cn
		for _, o := range info.Owners {
			out[o] = cn
		}
		for _, comm := range info.Comms {
			out["comm:"+comm] = cn
		}
	}
	return out
}

// client is the client an owner name is of (the owner name itself when
// no client claims it: a policy's [[owner]]).
func (b *psBuild) client(owner string) clientName {
	if c, ok := b.clients[owner]; ok {
		return c
	}
	return clientName{owner, owner, ""}
}

// mine reports whether p is in the view's scope: every process as root,
// else the reaper's own user's.
func (b *psBuild) mine(p *platform.Process) bool {
	return b.uid == 0 || b.s.UID(p) == b.uid
}

// findings indexes the findings a rule of the policy takes (the plan's
// items) by root: the trees no rule names are not shown, as in scan.
func (b *psBuild) findings() {
	b.rootOf, b.held = map[int]int{}, map[int]bool{}
	for i, it := range b.p.Plan.Items {
		b.rootOf[it.Finding.Root.PID] = i
	}
}

// records makes a session of every record's live process (one per pid:
// the first record with a session id wins), and an ended one of each
// record whose process is gone.
func (b *psBuild) records() {
	ev := &b.p.Evidence
	add := func(rec scan.Session) {
		o := rec.Owner
		if o.PID <= 0 {
			return
		}
		gone := o.Gone != ""
		if !gone {
			gone, _ = scan.OwnerGone(b.s, scan.RecordedBy(rec.Speaker, o.PID, o.Start))
		}
		cn := b.client(o.Name)
		s := audit.PSSession{Client: cn.name, Title: cn.title, Version: audit.UserText(rec.Version, audit.MaxName), PID: o.PID, UID: -1, SessionID: audit.UserText(rec.ID, audit.MaxName), Dir: audit.UserText(rec.Dir, audit.MaxCmdline), Kind: rec.Kind,
			Record: rec.Proof, Speaker: int64(rec.Speaker), Processes: []audit.PSProcess{}}
		if !rec.Started.IsZero() {
			s.StartedAt = rec.Started.UTC().Format(time.RFC3339)
		}
		if gone {
			if b.uid != 0 && rec.Speaker != b.uid {
				return
			}
			s.State = "ended"
			if !rec.Started.IsZero() {
				s.AgeSeconds = max(int64(time.Since(rec.Started).Seconds()), 0)
			}
			key := s.Client + "@" + strconv.Itoa(o.PID)
			if k, ok := b.endedAt[key]; ok {
				if e := &b.ended[k]; e.SessionID == "" && rec.ID != "" {
					e.SessionID, e.Dir, e.Kind, e.Record, e.Version, e.StartedAt, e.AgeSeconds = rec.ID, rec.Dir, rec.Kind, rec.Proof, s.Version, s.StartedAt, s.AgeSeconds
				}
				return
			}
			b.endedAt[key] = len(b.ended)
			b.ended = append(b.ended, s)
			return
		}
		proc := b.s.Get(o.PID)
		if proc == nil {
			return // started after the table was read: the next pass's
		}
		if _, orphan := b.rootOf[o.PID]; orphan || !b.mine(proc) {
			return // a client judged orphaned is among the orphans
		}
		if k, ok := b.anchor[o.PID]; ok {
			if e := &b.sessions[k]; e.SessionID == "" && rec.ID != "" {
				e.SessionID, e.Dir, e.Kind, e.Record, e.Version, e.StartedAt = rec.ID, rec.Dir, rec.Kind, rec.Proof, s.Version, s.StartedAt
			}
			return
		}
		b.anchor[o.PID] = len(b.sessions)
		b.sessions = append(b.sessions, s)
	}
	for _, rec := range ev.Sessions {
		add(rec)
	}
	for _, l := range ev.Ledgers {
		add(scan.Session{Owner: l.Owner, Proof: "the ledger " + l.Source, Speaker: l.Speaker})
	}
	for _, t := range ev.Ties {
		add(scan.Session{Owner: t.Owner, Proof: t.Proof, Speaker: t.Speaker})
	}
}

// byTitle makes a session of each process titled as a client's own whose
// parent is not (a client's helpers carry its title too), that no record
// named.
func (b *psBuild) byTitle() {
	s := b.s
	for i := range s.Procs {
		p := &s.Procs[i]
		cn, ok := b.titled(p)
		if !ok || p.Zombie() || p.KernelThread() {
			continue
		}
		if _, named := b.anchor[p.PID]; named {
			continue
		}
		if pp := s.Get(p.PPID); pp != nil {
			if pc, ok := b.titled(pp); ok && pc == cn {
				continue // a client's helper under the client
			}
		}
		if _, orphan := b.rootOf[p.PID]; orphan || !b.mine(p) {
			continue
		}
		b.anchor[p.PID] = len(b.sessions)
		b.sessions = append(b.sessions, audit.PSSession{Client: cn.name, Title: cn.title, PID: p.PID, UID: -1, Speaker: -1, Processes: []audit.PSProcess{}})
	}
}

// titled is the client p is titled as (scan.ClientMark.Own), if any.
func (b *psBuild) titled(p *platform.Process) (clientName, bool) {
	if cn, ok := b.clients["comm:"+p.Comm]; ok {
		return cn, true
	}
	for i := range b.native {
		if n := &b.native[i]; n.mark.Own(b.s, p) {
			return b.clients["info:"+n.name], true
		}
	}
	return clientName{}, false
}

// nativeClient is a client whose own processes only their command line
// tells (Info.VersionDirs, Info.Script): its mark, made once a view.
type nativeClient struct {
	mark scan.ClientMark
	name string
}

// versioned finds a version in a client's command: a path component or
// title of the form 1.2.3 (the native Claude Code binary is
// …/versions/2.1.331, and titles itself so).
var versioned = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.]+)?$`)

func (b *psBuild) version(p *platform.Process) string {
	if versioned.MatchString(p.Comm) {
		return p.Comm
	}
	argv := b.s.Cmdline(p)
	if len(argv) == 0 {
		return ""
	}
	for _, part := range strings.Split(argv[0], "/") {
		if versioned.MatchString(part) {
			return part
		}
	}
	return ""
}

// node is one process of a session's tree and its depth below the
// session's process.
type node struct {
	p     *platform.Process
	depth int
}

// walk lists the tree of the session process pid in pre-order, down to
// the next session (a client started in another's shell is its own).
func (b *psBuild) walk(pid int) []node {
	var out []node
	var visit func(i, depth int)
	visit = func(i, depth int) {
		p := &b.s.Procs[i]
		if p.KernelThread() {
			return
		}
		if _, other := b.anchor[p.PID]; other && depth > 0 {
			return
		}
		out = append(out, node{p, depth})
		if depth < 64 {
			for _, c := range b.res.Tree.Children(i) {
				visit(int(c), depth+1)
			}
		}
	}
	visit(b.s.Index(pid), 0)
	return out
}

// tree fills a live session from its tree: its processes, the findings
// among them marked, and their sums.
func (b *psBuild) tree(sess *audit.PSSession, tree []node) {
	s := b.s
	root := s.Get(sess.PID)
	if v := b.version(root); v != "" {
		sess.Version = v // the process's own word over its record's
	}
	sess.UID, sess.User = b.user(root)
	sess.State = state(root)
	if sess.Kind == "bg" || strings.HasPrefix(sess.Kind, "bg ") {
		// A background agent's job (Claude Code's --bg): its record says
		// so, whatever terminal its pty host holds.
		sess.State = "background"
	}
	sess.AgeSeconds = int64(s.Age(root).Seconds())
	for _, n := range tree {
		pr := b.process(n.p, n.depth)
		if k, ok := b.rootOf[n.p.PID]; ok && n.depth > 0 {
			b.held[k] = true
			sess.Leaks++
			pr.Leak = reasons(b.p.Plan.Items[k].Finding)
		}
		sess.Processes = append(sess.Processes, pr)
		sess.MemoryBytes += pr.MemoryBytes
		sess.CPUSeconds += pr.CPUSeconds
	}
}

// process is p as a view shows it.
func (b *psBuild) process(p *platform.Process, depth int) audit.PSProcess {
	s := b.s
	pr := audit.PSProcess{PID: p.PID, PPID: p.PPID, Depth: depth, State: string(rune(p.State)), AgeSeconds: int64(s.Age(p).Seconds()),
		CPUSeconds: float64(p.UTime+p.STime) / float64(max(s.ClockTicks, 1)), Cmdline: audit.CommandLine(s, p)}
	if p.State == 0 {
		pr.State = "?"
	}
	pr.MemoryBytes = p.RSS
	if pss, ok := b.pssOf[p.PID]; ok {
		pr.MemoryBytes, pr.PSS = pss, true
	} else if p.RSS > 0 {
		b.pss = false
	}
	_, titled := b.titled(p)
	if _, anchor := b.anchor[p.PID]; titled || anchor || depth == 0 {
		pr.Kind = "client"
	} else {
		pr.Kind, pr.Name = b.kind(p)
		pr.Name = audit.UserText(pr.Name, audit.MaxName) // a config's, a user's own words
	}
	return pr
}

// kind is what p is: the scan's classes, and a server a client's config
// declares (its user's config speaking for its user's process), with the
// name the config gives it — an MCP server the scan knows by its command
// line is named too.
func (b *psBuild) kind(p *platform.Process) (string, string) {
	k := b.cfg.Classify(b.s, p)
	if k != scan.KindOther && k != scan.KindMCP {
		return string(k), ""
	}
	words := scan.Words(b.s.Cmdline(p))
	if len(words) == 0 {
		return string(k), ""
	}
	for i := range b.p.Evidence.Servers {
		m := &b.p.Evidence.Servers[i]
		if m.MatchesWords(words) {
			if uid := b.s.UID(p); m.UID == uid || m.UID == 0 {
				return string(scan.KindMCP), m.Name
			}
		}
	}
	return string(k), ""
}

// user is p's uid and name.
func (b *psBuild) user(p *platform.Process) (int64, string) {
	uid := b.s.UID(p)
	if uid == platform.NoUID {
		return -1, ""
	}
	return int64(uid), policy.UserName(uid)
}

// state says how a live client runs: in its terminal's foreground, on a
// terminal behind another group, or with none.
func state(p *platform.Process) string {
	switch {
	case p.TTY == 0:
		return "headless"
	case p.TPGID > 0 && int(p.TPGID) != p.PGID:
		return "background"
	}
	return "live"
}

func reasons(f *scan.Finding) []string {
	out := make([]string, len(f.Reasons))
	for i, r := range f.Reasons {
		out[i] = string(r)
	}
	return out
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

package policy

import (
	"fmt"
	"strconv"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Gate is the one decision whether the reaper may signal a process. The
// plan asks it of every member of every finding; the reaper asks it again,
// with the same checks, of every process it is about to signal: the planned
// members once they are stopped and re-read, and every process a rescan
// finds in the tree. A process that appeared after the scan (forked, or
// switched to another user with setresuid) gets no easier treatment than
// one the plan saw.
type Gate struct {
	pol    *Policy
	cfg    scan.Config
	uid    uint32
	self   map[int]bool
	owned  []*scan.Result // whose OwnedRun counts: the scan, then re-reads
	doubts []Doubt
	// all is the first doubt that holds back every tree, byUID the first
	// of each uid, each by its place in doubts (-1: none): a user with many
	// ids (a subordinate range) casts one doubt per id, and a member is
	// asked in constant time.
	all   int
	byUID map[uint32]int
}

// Doubt is state that could not be read (a corrupt ledger, an OpenClaw
// state dir with garbage in it, a reader that ran out of time) and the
// trees it could speak for: a run it would have shown as owned could be in
// them. A user's state speaks only for that user's processes, so its doubt
// holds back only that user's trees: no user can stop the reaper for
// anyone else by writing garbage in their own files.
type Doubt struct {
	Reason string
	// All: the state could speak for any tree (a root-owned ledger).
	All bool
	// UID is the user the state belongs to: a tree with a process of this
	// user is held back.
	UID uint32
}

// NewGate makes the gate for one run: res is the scan the plan is made
// from, uid the reaper's effective uid (by default only its own processes
// are acted on), doubts the state that could not be read.
func (p *Policy) NewGate(res *scan.Result, uid uint32, doubts []Doubt) *Gate {
	g := &Gate{pol: p, cfg: p.ScanConfig(), uid: uid, self: ancestry(res), owned: []*scan.Result{res}, doubts: doubts, all: -1, byUID: map[uint32]int{}}
	for i, d := range doubts {
		switch _, seen := g.byUID[d.UID]; {
		case d.All && g.all < 0:
			g.all = i
		case !d.All && !seen:
			g.byUID[d.UID] = i
		}
	}
	return g
}

// AlsoOwned adds the runs a later re-read of the ledgers shows as owned
// (a run that became owned since the scan is spared).
func (g *Gate) AlsoOwned(res *scan.Result) { g.owned = append(g.owned, res) }

// Structural returns why no signal may reach p whatever a rule says, or
// "": pid 1 and below, the reaper and its ancestors, kernel threads, live
// owners, runs a live owner's ledger holds, protected processes.
func (g *Gate) Structural(s *platform.Snapshot, p *platform.Process) string {
	if why := g.structural(s, p); why != "" {
		return why
	}
	return g.protected(s, p)
}

// protected returns which [[protect]] entry names p, as a reason, or "".
func (g *Gate) protected(s *platform.Snapshot, p *platform.Process) string {
	if pr := g.pol.Protected(s, p); pr != nil {
		return fmt.Sprintf("pid %d (%s) is protected by %q", p.PID, p.Comm, pr.Name)
	}
	return ""
}

// structural is Structural but for [[protect]], which the plan says
// apart (Protected).
func (g *Gate) structural(s *platform.Snapshot, p *platform.Process) string {
	switch {
	case p.PID <= 1:
		return fmt.Sprintf("the tree holds pid %d", p.PID)
	case p.PID == s.Self && s.Self != 0:
		return fmt.Sprintf("the tree holds the reaper itself (pid %d)", p.PID)
	case s.Pipeline[p.PID]:
		return fmt.Sprintf("the tree holds pid %d (%s) of the reaper's own pipeline", p.PID, p.Comm)
	case g.self[p.PID]:
		return fmt.Sprintf("the tree holds the reaper's ancestor %d (%s)", p.PID, p.Comm)
	case p.KernelThread():
		return fmt.Sprintf("pid %d is a kernel thread", p.PID)
	}
	if k := g.cfg.OwnerIndex(s.CommandLine(p)); k >= 0 {
		return fmt.Sprintf("the tree holds live owner %s (pid %d)", g.cfg.Owners[k].Name, p.PID)
	}
	for _, res := range g.owned {
		if why, ok := res.OwnedRun(p.PID); ok {
			return fmt.Sprintf("the tree holds pid %d, %s", p.PID, why)
		}
	}
	return ""
}

// User returns why rule may not signal p, a process of the tree of f, for
// being another user's, or "": the reaper acts on its own uid's
// processes, and on other users' only where the rule's user list takes
// them in — by name, or with "@evidence" where f's own evidence speaks for
// that user. The uid is the process's real uid (Snapshot.UID), read now.
func (g *Gate) User(s *platform.Snapshot, p *platform.Process, rule *Rule, f *scan.Finding) string {
	uid := s.UID(p)
	switch {
	case p.Zombie():
		return "" // exited: nothing of it to signal, and the seam refuses zombies
	case uid == platform.NoUID:
		return fmt.Sprintf("pid %d: its owner could not be read", p.PID)
	case uid == g.uid:
		return ""
	case rule != nil && rule.UIDs != nil && rule.reaches(s, uid, f):
		return ""
	case rule == nil:
		return fmt.Sprintf("pid %d belongs to %s; only a rule's user list reaches other users", p.PID, UserText(uid))
	}
	if rule.Builtin != "" {
		return fmt.Sprintf("pid %d belongs to %s, not the reaper's %s: %s", p.PID, UserText(uid), UserText(g.uid), rule.Builtin)
	}
	reach := "has no user list"
	switch {
	case rule.Evidence:
		reach = "takes in other users by their own evidence only, and none of this user's proves the tree"
	case rule.UIDs != nil:
		reach = "does not list that user"
	}
	return fmt.Sprintf("pid %d belongs to %s, not the reaper's %s, and rule %q %s: add %q to its user list, or %q for the users whose own state proves their trees",
		p.PID, UserText(uid), UserText(g.uid), rule.Name, reach, userName(uid), EvidenceUser)
}

// UserText is a uid with its name where the host knows one: "uid 1001
// (alice)".
func UserText(uid uint32) string {
	if name := UserName(uid); name != "" {
		return fmt.Sprintf("uid %d (%s)", uid, name)
	}
	return fmt.Sprintf("uid %d", uid)
}

// userName is what a rule's user list would name uid by: its name, or the
// number.
func userName(uid uint32) string {
	if name := UserName(uid); name != "" {
		return name
	}
	return strconv.FormatUint(uint64(uid), 10)
}

// Doubtful returns why unreadable state holds back a tree holding p, or "".
func (g *Gate) Doubtful(s *platform.Snapshot, p *platform.Process) string {
	i, ok := g.byUID[s.UID(p)]
	switch {
	case g.all >= 0 && (!ok || g.all < i):
		return g.doubts[g.all].Reason
	case ok:
		return g.doubts[i].Reason
	}
	return ""
}

// Admit returns why the reaper may not signal p for rule, or "" when it
// may: the structural refusals, the keep mark (a process of the tree's
// user with REAPER_KEEP=1, unless the rule overrides it), the user check,
// a process too large to read whole, and doubt, in that order.
func (g *Gate) Admit(s *platform.Snapshot, p *platform.Process, rule *Rule, f *scan.Finding) string {
	if why := g.Structural(s, p); why != "" {
		return why
	}
	if (rule == nil || !rule.OverrideKeep) && marked(s, p) && s.UID(p) == s.UID(f.Root) {
		// A process the tree's rescans found that asks to be kept.
		return keptDetail(p)
	}
	if why := g.User(s, p, rule, f); why != "" {
		return why
	}
	if why := s.ReadInPart(p); why != "" {
		// What was not read could have matched a [[protect]] entry, a
		// rule or an owner's marker: the process's owner made it too
		// large to read, and it is their doubt.
		return fmt.Sprintf("pid %d: %s, and is not acted on", p.PID, why)
	}
	return g.Doubtful(s, p)
}

// Deny is the seam's deny list for a plan (kill.Guard): every live
// owner the scan saw, every run a live owner's ledger holds, and every
// member of the plan's trees a [[protect]] entry names. The plan refuses
// such trees already; the seam refuses them again, by pid.
func (g *Gate) Deny(plan *Plan) map[int]string {
	deny := map[int]string{}
	res := g.owned[0]
	s := res.Tree.Snap
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			switch pr := g.pol.Protected(s, m.Proc); {
			case pr != nil:
				deny[m.Proc.PID] = fmt.Sprintf("protected by %q", pr.Name)
			case it.Outcome == Protected:
				deny[m.Proc.PID] = it.Detail // kept by its own word
			}
		}
	}
	for _, p := range res.LiveOwners() {
		deny[p.PID] = "a live owner"
	}
	for _, r := range g.owned {
		for _, lr := range r.Ledger {
			if why, ok := r.OwnedRun(lr.Run.PID); ok {
				deny[lr.Run.PID] = why
			}
		}
	}
	return deny
}

// SpareOwned applies a re-read of the ledgers made just before acting: a
// planned tree holding a process that a live owner's ledger now holds as
// a running run — the same pid with the same start — is
// spared, refused by design (Benign), and the gate refuses those runs from
// here on. A planned superseded server must be superseded on this second
// look too — the client's record and the table agreeing twice — or it is
// spared the same way. It returns how many items were spared.
func (pl *Plan) SpareOwned(now *scan.Result) int {
	pl.Gate.AlsoOwned(now)
	s := now.Tree.Snap
	spared := 0
	for i := range pl.Items {
		it := &pl.Items[i]
		if it.Outcome != Planned {
			continue
		}
		if it.Finding.Has(scan.Superseded) && !stillSuperseded(now, it.Finding.Root) {
			it.Outcome, it.Benign = Refused, true
			it.Detail = fmt.Sprintf("spared: on a second look, pid %d is not shown superseded", it.Finding.Root.PID)
			spared++
			continue
		}
		for _, m := range it.Finding.Members {
			p := s.Get(m.Proc.PID)
			if p == nil || p.StartTicks != m.Proc.StartTicks {
				continue
			}
			if why, owned := now.OwnedRun(p.PID); owned {
				it.Outcome, it.Benign = Refused, true
				it.Detail = fmt.Sprintf("spared: since the scan, pid %d became %s", p.PID, why)
				spared++
				break
			}
		}
	}
	return spared
}

// stillSuperseded reports whether now holds a superseded finding rooted at
// root's process (its pid, with its start).
func stillSuperseded(now *scan.Result, root *platform.Process) bool {
	for k := range now.Findings {
		f := &now.Findings[k]
		if f.Root.PID == root.PID && f.Root.StartTicks == root.StartTicks && f.Has(scan.Superseded) {
			return true
		}
	}
	return false
}

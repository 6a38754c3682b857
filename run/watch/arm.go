package watch

import (
	"path/filepath"
	"time"

	"github.com/orphanreaper/reaper/client"
	pwatch "github.com/orphanreaper/reaper/platform/watch"
	"github.com/orphanreaper/reaper/run"
)

// Owners are the owners the pass's evidence names, alive: the live
// owners the scan met (a policy's [[owner]]s), the owners of the ledgers'
// runs (a session file's claude, a daemon record's daemon, a gateway's
// lock) and of the findings (a tie's, a marker's group leader), and the
// clients' own processes, by their comm. Their exit is when orphans
// appear.
func Owners(p *run.Pass) []pwatch.Target {
	t, cs := p.Table, p.Config.Clients
	s := t.Snap
	seen := map[int]bool{}
	var out []pwatch.Target
	add := func(pid int) {
		if pid <= 1 || seen[pid] {
			return
		}
		seen[pid] = true
		if p := s.Get(pid); p != nil && !p.Zombie() && !p.KernelThread() {
			out = append(out, pwatch.Target{PID: p.PID, StartTicks: p.StartTicks, UID: s.UID(p)})
		}
	}
	for _, p := range t.Result.LiveOwners() {
		add(p.PID)
	}
	for _, lr := range t.Result.Ledger {
		if gone, _ := t.Result.OwnerGone(lr.Ledger); !gone {
			add(lr.Ledger.Owner.PID)
		}
	}
	for i := range t.Result.Findings {
		add(t.Result.Findings[i].OwnerPID)
	}
	infos := make([]client.Info, 0, len(cs.All()))
	for _, c := range cs.All() {
		infos = append(infos, c.Info())
	}
	for i := range s.Procs {
		p := &s.Procs[i]
		for k := range infos {
			if infos[k].Own(s, p) {
				add(p.PID)
				break
			}
		}
	}
	return out
}

// The owners one watch holds a pidfd for: any user can start processes
// titled like a client, and each would be an owner to watch. A uid's
// owners past perUIDOwners, and all past maxOwners, are not watched: the
// watch then polls (WatchConfig.Poll) until they are fewer, and says how
// many it could not watch.
const (
	perUIDOwners = 256
	maxOwners    = 8192
)

// capOwners returns the targets a watch holds a pidfd for — root's
// first, then each uid's up to perUIDOwners, all up to maxOwners — and
// how many it left out.
func capOwners(targets []pwatch.Target) ([]pwatch.Target, int) {
	if len(targets) <= perUIDOwners {
		return targets, 0
	}
	byUID := map[uint32]int{}
	out := make([]pwatch.Target, 0, min(len(targets), maxOwners))
	for _, rootFirst := range []bool{true, false} {
		for _, t := range targets {
			if (t.UID == 0) != rootFirst || len(out) >= maxOwners {
				continue
			}
			if t.UID != 0 && byUID[t.UID] >= perUIDOwners {
				continue
			}
			byUID[t.UID]++
			out = append(out, t)
		}
	}
	return out, len(targets) - len(out)
}

// AnnounceDirs are the dirs below the state dirs the pass went through —
// read, or passed over for their user's owning no process — where their
// client makes a file as an owner starts (client.Info.Announce). A dir
// that does not exist yet is not watched; the backstop covers it.
func AnnounceDirs(p *run.Pass) []pwatch.Dir {
	cs := p.Config.Clients
	var out []pwatch.Dir
	for _, d := range p.Dirs {
		c := cs.ByName(d.Client)
		if c == nil {
			continue
		}
		for _, rel := range c.Info().Announce {
			out = append(out, pwatch.Dir{Path: filepath.Join(d.Path, rel), UID: d.UID})
		}
	}
	return out
}

// NextDue is when the next of the pass's orphaned trees reaches an age a
// rule or the defaults ask for (min_age), after now (zero: none): a pass
// is due then, for what was too young is not yet an orphan the policy
// acts on.
func NextDue(p *run.Pass, now time.Time) time.Time {
	t, pol := p.Table, p.Config.Policy
	ages := []time.Duration{pol.Defaults.MinAge}
	for _, r := range pol.Rules {
		if r.MinAge > 0 {
			ages = append(ages, r.MinAge)
		}
	}
	var due time.Time
	s := t.Snap
	for i := range t.Result.Findings {
		started := s.Started(t.Result.Findings[i].Root)
		for _, a := range ages {
			if at := started.Add(a); at.After(now) && (due.IsZero() || at.Before(due)) {
				due = at
			}
		}
	}
	return due
}

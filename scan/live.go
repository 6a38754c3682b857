package scan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/orphanreaper/reaper/platform"
)

// versionTitle is a comm that is a version string ("2.1.331", "v1.0.2").
var versionTitle = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+`) })

// Own reports whether p is one of the client's own processes (ClientMark):
// its comm first, its command line only where the comm asks for it (a
// version, or node).
func (m *ClientMark) Own(s *platform.Snapshot, p *platform.Process) bool {
	if p.Comm == "" || p.Zombie() || p.KernelThread() {
		return false
	}
	if slices.Contains(m.Comms, p.Comm) {
		return true
	}
	switch {
	case m.Script != nil && p.Comm == "node":
		return m.Script.MatchString(s.CommandLine(p))
	case len(m.VersionDirs) == 0 || !versionTitle().MatchString(p.Comm):
		return false
	}
	argv := s.Cmdline(p)
	if len(argv) == 0 {
		return false
	}
	for _, dir := range m.VersionDirs {
		if strings.Contains(argv[0], dir) {
			return true
		}
	}
	return false
}

// ownClient is the client whose own process p is (its ClientMark), or nil.
func (m *Marks) ownClient(s *platform.Snapshot, p *platform.Process) *ClientMark {
	for i := range m.Clients {
		if m.Clients[i].Own(s, p) {
			return &m.Clients[i]
		}
	}
	return nil
}

// ApplySpawners attributes the findings still untracked whose root carries
// a client's spawner mark to that client, and proves it gone when no
// process of the client's own that could have spawned the root is alive
// (SpawnerMark): none of the root's user's or root's, started no later
// than the root. The table is read whole before a finding is judged, so a
// client alive through the read is in it.
func (r *Result) ApplySpawners() {
	s := r.Tree.Snap
	var clients map[string][]*platform.Process // owner → its live own processes, found once
	eachMarked(r, r.cfg.Marks.Spawners, func(m SpawnerMark) string { return m.Env }, func(f *Finding, m SpawnerMark, v string) bool {
		if v != m.Value {
			return false
		}
		if clients == nil {
			clients = r.liveClients()
		}
		marker := m.Env + "=" + v
		f.Owner = m.Owner
		f.claimed()
		uid := s.UID(f.Root)
		f.spoken(uid) // the mark is in its own environment
		if uid == platform.NoUID {
			// Whose the root is decides which clients could have spawned
			// it: not known, nothing is shown.
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: spawned by %s; its user could not be read, so its end is not shown", marker, m.Owner))
			return true
		}
		for _, q := range clients[m.Owner] {
			if q.StartTicks > f.Root.StartTicks {
				continue // started after the root: it did not spawn it
			}
			if qu := s.UID(q); qu != uid && qu != 0 {
				continue // another user's: it spawned none of this user's
			}
			f.OwnerPID = q.PID
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: spawned by %s; %s pid %d (%s), started before it, is alive: it may be the one that spawned it, so its end is not shown",
				marker, m.Owner, m.Owner, q.PID, clip(s.CommandLine(q), 80)))
			return true
		}
		f.Reasons = append(f.Reasons, OwnerDead)
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: spawned by %s, and no %s process of uid %s or root that started before it is alive (the process table, read whole): the %s that spawned it is gone",
			marker, m.Owner, m.Owner, uidText(uid), m.Owner))
		return true
	})
}

// liveClients lists, by owner, the live processes that are a client's own
// (ClientMark), in pid order: one walk of the table.
func (r *Result) liveClients() map[string][]*platform.Process {
	s := r.Tree.Snap
	out := map[string][]*platform.Process{}
	for i := range s.Procs {
		if m := r.cfg.Marks.ownClient(s, &s.Procs[i]); m != nil {
			out[m.Owner] = append(out[m.Owner], &s.Procs[i])
		}
	}
	return out
}

// ApplyLiveClients takes out of the findings each tree whose root is a
// live client's own process (ClientMark) that nothing but its parent's end
// marks: reparented, untracked, nothing else — a `nohup CLIENT run &`
// whose terminal was closed. A client a person
// started is a session wherever its parent went; it is a finding only
// when its own proof says it is over (its launcher's group gone, its
// output read by no one, its record ended). Not a process that leads its
// own session: a client's daemon (an app server, a hub several sessions
// share) is made by setsid, and its record, not its title, says whether
// it is owned.
// Run after the stdin and
// stdout are asked (Attribute), so a headless client whose reader died is
// still one.
func (r *Result) ApplyLiveClients() {
	if len(r.cfg.Marks.Clients) == 0 {
		return
	}
	s := r.Tree.Snap
	r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool {
		for _, x := range f.Reasons {
			if x != Reparented && x != Untracked {
				return false
			}
		}
		if f.Root.SID == f.Root.PID {
			return false // a daemon's setsid: a record says whether it is owned
		}
		m := r.cfg.Marks.ownClient(s, f.Root)
		if m == nil {
			return false
		}
		if r.live == nil {
			r.live = map[int]string{}
		}
		r.live[f.Root.PID] = fmt.Sprintf("it is %s's own process, alive: a session, though what started it is gone (%s)", m.Owner, f.Evidence[0])
		delete(r.openStdin, f.Root.PID)
		return true
	})
}

// LiveClient reports whether pid is a live client's own process that was
// reparented and is a session, not a finding (ApplyLiveClients), and why.
func (r *Result) LiveClient(pid int) (string, bool) {
	why, ok := r.live[pid]
	return why, ok
}

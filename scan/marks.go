package scan

import (
	"fmt"
	"strconv"
)

// ApplyLeaders attributes the findings still untracked whose root carries
// a client's leader mark to that client, by the process group the root
// kept: when the group's leader pid is gone (or a zombie) the client is,
// and the finding is owner-dead; when it lives, the tree is its leak. A
// root that leads a group of its own (setsid, setpgid) names no client
// process: it is the client's by its mark alone, not shown dead. Marks are
// the client's convention, compiled in, about the process that carries
// them: no user's file speaks here.
func (r *Result) ApplyLeaders() {
	s := r.Tree.Snap
	eachMarked(r, r.cfg.Marks.Leaders, func(m LeaderMark) string { return m.Env }, func(f *Finding, m LeaderMark, v string) bool {
		marker := m.Env + "=" + v
		f.Owner = m.Owner
		f.claimed()
		f.spoken(s.UID(f.Root)) // the mark is in its own environment
		pg := f.Root.PGID
		if s.NoReparenting {
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: spawned by %s; Windows keeps no process groups, so which %s is not known", marker, m.Owner, m.Owner))
			return true
		}
		if pg <= 1 || pg == f.Root.PID {
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: spawned by %s; it leads its own process group, so which %s is not known", marker, m.Owner, m.Owner))
			return true
		}
		f.OwnerPID = pg
		proven := f.Root.SID != pg
		if m.PIDEnv {
			proven = v == strconv.Itoa(pg)
		}
		q := s.Get(pg)
		switch {
		case q != nil && !q.Zombie():
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, process group %d: left behind by its live leader pid %d (%s)", marker, pg, pg, clip(s.CommandLine(q), 80)))
		case !proven:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, process group %d: its leader is gone, but the group is its session's (made by setsid), so its leader is not shown to be %s", marker, pg, m.Owner))
		case q == nil:
			f.Reasons = append(f.Reasons, OwnerDead)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, process group %d: its leader, %s pid %d, is gone (the kernel gives no process a pid its group still holds)", marker, pg, m.Owner, pg))
		default:
			f.Reasons = append(f.Reasons, OwnerDead)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, process group %d: its leader, %s pid %d, has exited (zombie)", marker, pg, m.Owner, pg))
		}
		return true
	})
}

// ApplyPIDMarks attributes the findings still untracked whose root carries
// a client's pid mark to that client, and proves it gone when the named
// process is (PIDMark).
func (r *Result) ApplyPIDMarks() {
	s := r.Tree.Snap
	eachMarked(r, r.cfg.Marks.PIDs, func(m PIDMark) string { return m.Env }, func(f *Finding, m PIDMark, v string) bool {
		pid, err := strconv.Atoi(v)
		if err != nil || pid <= 1 || pid == f.Root.PID {
			// Not a pid, or the root's own: it names no other process
			// whose end could be proven. The next mark may.
			return false
		}
		marker := m.Env + "=" + strconv.Itoa(pid) // the number, not what was written ("+007")
		f.Owner, f.OwnerPID = m.Owner, pid
		f.claimed()
		f.spoken(s.UID(f.Root)) // the mark is in its own environment
		q := s.Get(pid)
		gone, why := OwnerGone(s, Named{PID: pid, NotAfter: f.Root, User: s.UID(f.Root)})
		switch {
		case gone && f.Root.TTY != 0 && f.Root.TPGID > 0 && int(f.Root.TPGID) == f.Root.PGID:
			// Its group is still its terminal's foreground: the user
			// is looking at it, whatever launched it.
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s is gone (%s), but process group %d is its terminal's foreground: its user can still reach it", marker, m.Owner, why, f.Root.PGID))
		case gone:
			f.Reasons = append(f.Reasons, OwnerDead)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: %s %s", marker, m.Owner, why))
		default:
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s: left behind by the live %s pid %d (%s)", marker, m.Owner, pid, clip(s.CommandLine(q), 80)))
		}
		return true
	})
}

// eachMarked calls take, for each finding still untracked, with each of
// marks whose variable (env) its root carries, in order, until take says
// it took the finding.
func eachMarked[M any](r *Result, marks []M, env func(M) string, take func(f *Finding, m M, v string) bool) {
	if len(marks) == 0 {
		return
	}
	s := r.Tree.Snap
	for k := range r.Findings {
		f := &r.Findings[k]
		if !f.Has(Untracked) {
			continue
		}
		for _, m := range marks {
			if v, ok := s.Getenv(f.Root, env(m)); ok && take(f, m, v) {
				break
			}
		}
	}
}

// clip cuts s to n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// supervised marks a finding whose root is one of a client's supervisor
// processes: its kind is the kind of the first command it anchors (the
// first member, in pre-order, that is not a supervisor), and it is
// reported as the client's own cleanup in progress.
func (r *Result) supervised(f *Finding) {
	s := r.Tree.Snap
	sup := r.cfg.Marks.supervisor(s.CommandLine(f.Root))
	if sup == nil {
		return
	}
	f.Supervisor = sup.Role
	for _, m := range f.Members[1:] {
		cmd := s.CommandLine(m.Proc)
		if r.cfg.Marks.supervisor(cmd) == nil {
			f.Kind = r.cfg.Classify(s, m.Proc)
			f.Evidence = append(f.Evidence, fmt.Sprintf("the root is the %s, anchoring %q: %s", sup.Role, cmd, sup.Note))
			return
		}
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("the root is the %s, anchoring nothing now", sup.Role))
}

// supervisor is the supervisor mark cmd matches, or nil.
func (m *Marks) supervisor(cmd string) *SupervisorMark {
	for i := range m.Supervisors {
		if m.Supervisors[i].Cmdline.MatchString(cmd) {
			return &m.Supervisors[i]
		}
	}
	return nil
}

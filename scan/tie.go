package scan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// ApplyTies attributes to their owners the findings no stronger marker or
// ledger claimed and whose root carries a tie's marker. A gateway run in
// the foreground, for one, may put no pid marker on its children, so after
// a SIGKILL its survivors — a PTY shell that ignores SIGHUP, a
// double-forked daemon, an ACP adapter and the agent CLI it runs — would be
// merely reparented and untracked; the state dir they name holds the lock
// that names the gateway. When the owner a tie names is gone (its
// pid gone, another process now, of another boot) the finding is
// owner-dead with the tie's proof as evidence; when it lives, the tree is
// its leak, attributed to it. A tie speaks only for its speaker's
// processes.
func (r *Result) ApplyTies(ties []Tie) {
	if len(ties) == 0 {
		return
	}
	idx := indexTies(ties)
	for k := range r.Findings {
		f := &r.Findings[k]
		if !f.Has(Untracked) {
			continue // attributed already, by a stronger marker or a ledger
		}
		t, marker := r.tieFor(f, ties, idx)
		if t == nil {
			continue
		}
		f.Owner, f.OwnerPID = t.Owner.Name, t.Owner.PID
		f.claimed()
		f.spoken(t.Speaker)
		l := ledger.Ledger{Owner: t.Owner, Speaker: t.Speaker, Source: t.Proof}
		if gone, why := r.OwnerGone(&l); gone {
			f.Reasons = append(f.Reasons, OwnerDead)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, %s: %s names pid %d: %s", marker, t.Where, t.Proof, t.Owner.PID, why))
		} else {
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, %s: left behind by the live %s pid %d (%s)", marker, t.Where, t.Noun, t.Owner.PID, t.Proof))
		}
	}
}

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

// ApplyHeadless finds the clients left headless: a still untracked root
// that is a client's own process (a CommandMark with an Owner), launched
// as a job — it does not lead its process group, and the group is not its
// session's (a shell's job, not a setsid daemon a client shares) — whose
// group leader, what the user typed, is gone, and which its user can no
// longer reach: it has no terminal, or its group is not its terminal's
// foreground. The leader's pid is held by the group while the root lives
// (LeaderMark), so the leader gone is proven. What the client runs goes
// with it: the finding is the tree it heads, owner-dead. Never a client
// the user put in the background (its leader lives), never one in a live
// terminal's foreground, never a daemon leading its own session.
func (r *Result) ApplyHeadless() {
	s := r.Tree.Snap
	for k := range r.Findings {
		f := &r.Findings[k]
		root := f.Root
		pg := root.PGID
		if !f.Has(Untracked) || pg <= 1 || pg == root.PID || pg == root.SID {
			continue
		}
		if q := s.Get(pg); q != nil && !q.Zombie() {
			continue // what launched it lives: its user's to manage
		}
		if root.TTY != 0 && root.TPGID > 0 && int(root.TPGID) == pg {
			continue // the terminal's foreground: its user can reach it
		}
		m := r.clientOf(s.CommandLine(root))
		if m == nil {
			continue
		}
		f.Owner, f.OwnerPID = m.Owner, pg
		f.claimed()
		f.Reasons = append(f.Reasons, OwnerDead)
		f.RootSpeaks = true // the kernel's process table, about the root's own group
		reach := "it has no terminal"
		if root.TTY != 0 {
			reach = "its group is not its terminal's foreground"
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("headless %s: what launched it, the leader of its process group %d, is gone, and %s: its user can no longer reach it", m.Owner, pg, reach))
	}
}

// clientOf is the command mark with an owner — an agent client's own
// process — that the command line cmd matches, or nil.
func (r *Result) clientOf(cmd string) *CommandMark {
	for i := range r.cfg.Marks.Commands {
		if m := &r.cfg.Marks.Commands[i]; m.Owner != "" && m.Cmdline.MatchString(cmd) {
			return m
		}
	}
	return nil
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

// tieFor finds the first tie f's root carries, and the marker that ties it
// as the evidence shows it. A tie by a named value (a state dir, a session
// id) that is another user's is dropped and counted (speaks), and the
// next candidate is asked; a tie by a default place considers only its
// speaker's own processes.
func (r *Result) tieFor(f *Finding, ties []Tie, idx *tieIndex) (*Tie, string) {
	s := r.Tree.Snap
	for _, i := range idx.candidates(s, f.Root) {
		t := &ties[i]
		v, _ := s.Getenv(f.Root, t.Env)
		if t.Unless != "" {
			if u, named := s.Getenv(f.Root, t.Unless); named && u != "" {
				continue
			}
		}
		switch {
		case t.Value == "":
			if s.UID(f.Root) != t.Speaker {
				continue
			}
		case t.InList:
			if !inList(v, t.Value) {
				continue
			}
		case v == "" || v != t.Value && filepath.Clean(v) != t.Value:
			continue
		}
		// Said once a tie holds: a root's whole PATH, for every tie it
		// does not match, was megabytes of garbage at 1,000 findings.
		marker := t.Env + "=" + v
		if t.InList {
			marker = fmt.Sprintf("%s holds %s", t.Env, t.Value)
		}
		if t.Value != "" && !r.speaks(t.Speaker, f.Root, t.Proof) {
			// Another user's claim is no answer: it is dropped and
			// counted, and the ties after it are still asked (user A's
			// session file carrying B's session id once hid B's tie
			// whenever A's home was listed first).
			continue
		}
		if t.Strong == t.Env {
			return t, marker
		}
		if t.Strong != "" {
			if sv, strong := s.Getenv(f.Root, t.Strong); strong {
				return t, t.Strong + "=" + sv
			}
		}
		started := s.Taken.Add(-s.Age(f.Root))
		if t.Since.IsZero() || started.Before(t.Since) {
			continue // it may be older than that owner: not shown to be its
		}
		return t, fmt.Sprintf("%s, started after the %s began", marker, t.Noun)
	}
	return nil, ""
}

// tieIndex finds the ties a root could be tied by with one lookup of
// each variable the ties name, not one per tie: at 1,000 findings and 20
// users' ties, a lookup per pair was 80,000 scans of an environment.
type tieIndex struct {
	names []string                    // the variables, each once
	exact map[string]map[string][]int // variable → value → ties, in order
	dirs  map[string]*dirTrie         // variable → the directories a list entry may begin with (InList)
	other map[string][]int            // variable → ties by any value
	buf   []int
}

func indexTies(ties []Tie) *tieIndex {
	idx := &tieIndex{exact: map[string]map[string][]int{}, dirs: map[string]*dirTrie{}, other: map[string][]int{}}
	for i, t := range ties {
		if _, seen := idx.exact[t.Env]; !seen {
			idx.names = append(idx.names, t.Env)
			idx.exact[t.Env] = map[string][]int{}
		}
		switch {
		case t.Value == "":
			idx.other[t.Env] = append(idx.other[t.Env], i)
		case t.InList:
			if idx.dirs[t.Env] == nil {
				idx.dirs[t.Env] = &dirTrie{}
			}
			idx.dirs[t.Env].add(t.Value, i)
		default:
			idx.exact[t.Env][t.Value] = append(idx.exact[t.Env][t.Value], i)
		}
	}
	return idx
}

// candidates are the indices, in the ties' order, of the ties whose
// variable p carries with a value that could match.
func (idx *tieIndex) candidates(s *platform.Snapshot, p *platform.Process) []int {
	out := idx.buf[:0]
	for _, name := range idx.names {
		v, ok := s.Getenv(p, name)
		if !ok {
			continue
		}
		out = append(out, idx.exact[name][v]...)
		if c := filepath.Clean(v); c != v {
			out = append(out, idx.exact[name][c]...)
		}
		if dirs := idx.dirs[name]; dirs != nil {
			// Each entry walked once through the directories the ties
			// name: a cost of the entry's length, whatever the number of
			// ties (20 users' ties each scanned for in every root's PATH
			// was a tenth of a scan) and whatever the entry holds (a
			// lookup of each of its leading directories hashed every
			// prefix: a user's 130 KB PATH of /a/a/… took every run to
			// its deadline).
			for entry := range strings.SplitSeq(v, ":") {
				out = dirs.match(entry, out)
			}
		}
		out = append(out, idx.other[name]...)
	}
	slices.Sort(out)
	idx.buf = out
	return slices.Compact(out)
}

// dirTrie holds directories ("/home/a/.client/", ending in '/') by their
// components: a path is walked one component at a time, each looked up
// once, so matching an entry costs its length.
type dirTrie struct {
	next map[string]*dirTrie // the component after this directory → its node
	ties []int               // the ties of the directory that ends here
}

// add files tie i under dir, a directory as a tie names it, ending in
// '/' (what a list entry must begin with). A value without the '/' names
// no directory and matches nothing.
func (d *dirTrie) add(dir string, i int) {
	if !strings.HasSuffix(dir, "/") {
		return
	}
	n := d
	for {
		j := strings.IndexByte(dir, '/')
		if j < 0 {
			break
		}
		c := dir[:j]
		dir = dir[j+1:]
		if n.next == nil {
			n.next = map[string]*dirTrie{}
		}
		if n.next[c] == nil {
			n.next[c] = &dirTrie{}
		}
		n = n.next[c]
	}
	n.ties = append(n.ties, i)
}

// match appends to out the ties of every directory entry begins with —
// at every '/' of entry, the ties of the directory that ends there.
func (d *dirTrie) match(entry string, out []int) []int {
	n := d
	for {
		j := strings.IndexByte(entry, '/')
		if j < 0 {
			return out
		}
		if n = n.next[entry[:j]]; n == nil {
			return out
		}
		out = append(out, n.ties...)
		entry = entry[j+1:]
	}
}

// inList reports whether an entry of the ':'-separated list v begins with
// dir.
func inList(v, dir string) bool {
	for entry := range strings.SplitSeq(v, ":") {
		if strings.HasPrefix(entry, dir) {
			return true
		}
	}
	return false
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

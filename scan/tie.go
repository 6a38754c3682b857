package scan

import (
	"fmt"
	"path/filepath"
	"slices"
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
	idx := indexTies(ties, listFormOf(r.Tree.Snap))
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
			if !inList(v, t.Value, idx.form.list) {
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
	// form is how the table's lists are written (InList).
	form listForm
}

// listForm is how a table's systems write a list of directories: the byte
// between its entries and the one between a path's components.
type listForm struct{ list, dir byte }

// listFormOf: Windows writes PATH as C:\a;C:\b, every other system
// reaper reads as /a:/b.
func listFormOf(s *platform.Snapshot) listForm {
	if s != nil && s.NoReparenting {
		return listForm{';', '\\'}
	}
	return listForm{':', '/'}
}

func indexTies(ties []Tie, form listForm) *tieIndex {
	idx := &tieIndex{exact: map[string]map[string][]int{}, dirs: map[string]*dirTrie{}, other: map[string][]int{}, form: form}
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
			idx.dirs[t.Env].add(t.Value, i, form.dir)
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
			for entry := range strings.SplitSeq(v, string(idx.form.list)) {
				out = dirs.match(entry, out, idx.form.dir)
			}
		}
		out = append(out, idx.other[name]...)
	}
	slices.Sort(out)
	idx.buf = out
	return slices.Compact(out)
}

// dirTrie holds directories ("/home/a/.client/", ending in the table's
// separator, '\' on Windows) by their components: a path is walked one
// component at a time, each looked up once, so matching an entry costs
// its length.
type dirTrie struct {
	next map[string]*dirTrie // the component after this directory → its node
	ties []int               // the ties of the directory that ends here
}

// add files tie i under dir, a directory as a tie names it, ending in
// sep (what a list entry must begin with). A value without the sep names
// no directory and matches nothing.
func (d *dirTrie) add(dir string, i int, sep byte) {
	if dir == "" || dir[len(dir)-1] != sep {
		return
	}
	n := d
	for {
		j := strings.IndexByte(dir, sep)
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
// at every sep of entry, the ties of the directory that ends there.
func (d *dirTrie) match(entry string, out []int, sep byte) []int {
	n := d
	for {
		j := strings.IndexByte(entry, sep)
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

// inList reports whether an entry of the list v, its entries separated
// by sep, begins with dir.
func inList(v, dir string, sep byte) bool {
	for entry := range strings.SplitSeq(v, string(sep)) {
		if strings.HasPrefix(entry, dir) {
			return true
		}
	}
	return false
}

package scan

import "github.com/orphanreaper/reaper/platform"

// Tree is the parent→children structure of a snapshot, built in one linear
// pass: children are kept as one flat array indexed by offsets (compressed
// sparse rows), so a 10,000-process table costs three int32 slices.
type Tree struct {
	Snap   *platform.Snapshot
	parent []int32 // index of the parent in Snap.Procs, or -1 when not visible
	first  []int32 // children of i are kids[first[i]:first[i+1]]
	kids   []int32

	// Walks mark what they visited with a generation number, so one slice
	// serves every walk without being cleared.
	visited []uint32
	gen     uint32
	stack   []walkFrame // Walk's, kept between walks
}

// NewTree builds the tree of s.
func NewTree(s *platform.Snapshot) *Tree {
	n := len(s.Procs)
	t := &Tree{Snap: s, parent: make([]int32, n), first: make([]int32, n+1), kids: make([]int32, n)}
	for i := range s.Procs {
		p := &s.Procs[i]
		t.parent[i] = -1
		if p.PPID > 0 && p.PPID != p.PID && !p.ParentGone() {
			t.parent[i] = int32(s.Index(p.PPID))
		}
		if t.parent[i] >= 0 {
			t.first[t.parent[i]+1]++
		}
	}
	fill := make([]int32, n)
	breakCycles(t.parent, t.first, fill)
	for i := 0; i < n; i++ {
		t.first[i+1] += t.first[i]
	}
	copy(fill, t.first[:n])
	for i := range s.Procs {
		if p := t.parent[i]; p >= 0 {
			t.kids[fill[p]] = int32(i)
			fill[p]++
		}
	}
	return t
}

// Parent returns the index of i's parent, or -1 when it is not visible.
func (t *Tree) Parent(i int) int { return int(t.parent[i]) }

// Children returns the indexes of i's children, in pid order.
func (t *Tree) Children(i int) []int32 { return t.kids[t.first[i]:t.first[i+1]] }

// Walk visits root and its descendants in pre-order with their depth below
// root. A snapshot is read while processes fork and die, so a reused pid can
// in theory close a loop; each process is visited at most once.
func (t *Tree) Walk(root int, visit func(i, depth int)) {
	if t.visited == nil {
		t.visited = make([]uint32, len(t.parent))
	}
	t.gen++
	// The stack is kept for the next walk: a fan of thousands pushes them
	// all at once. A walk started from visit gets a stack of its own.
	stack := append(t.stack[:0], walkFrame{int32(root), 0})
	t.stack = nil
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if t.visited[f.i] == t.gen {
			continue
		}
		t.visited[f.i] = t.gen
		visit(int(f.i), int(f.depth))
		kids := t.Children(int(f.i))
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, walkFrame{kids[k], f.depth + 1})
		}
	}
	t.stack = stack
}

type walkFrame struct{ i, depth int32 }

// breakCycles cuts the parent links that close a loop, so that every walk
// up ends: a racy read after pid reuse can see A's parent as B and B's as
// A. The child counts in first (first[p+1] counts p's children) lose the
// cut link. mark is scratch space of len(parent), left dirty.
func breakCycles(parent, first, mark []int32) {
	for k := range parent {
		stamp := int32(k + 1) // on the walk up from k; -1: known to end
		for j := k; j >= 0 && mark[j] == 0; j = int(parent[j]) {
			mark[j] = stamp
			if p := parent[j]; p >= 0 && mark[p] == stamp {
				parent[j] = -1 // the link back into this walk: cut it
				first[p+1]--
				break
			}
		}
		for j := k; j >= 0 && mark[j] == stamp; j = int(parent[j]) {
			mark[j] = -1
		}
	}
}

// Ancestors calls visit for each visible ancestor of i, nearest first, and
// stops early when visit returns false.
func (t *Tree) Ancestors(i int, visit func(j int) bool) {
	for steps, j := 0, t.Parent(i); j >= 0 && steps < len(t.parent); steps, j = steps+1, t.Parent(j) {
		if !visit(j) {
			return
		}
	}
}

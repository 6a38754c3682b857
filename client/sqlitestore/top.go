package sqlitestore

import "slices"

// Top keeps the n least of the values it is given, by cmp: what ORDER BY
// … LIMIT n keeps of a table's rows, in memory for n of them however many
// rows the table holds.
type Top[T any] struct {
	n   int
	cmp func(a, b T) int
	h   []T // a heap whose root is the greatest kept
}

// NewTop keeps the n least by cmp.
func NewTop[T any](n int, cmp func(a, b T) int) *Top[T] {
	return &Top[T]{n: n, cmp: cmp}
}

// Add offers v.
func (t *Top[T]) Add(v T) {
	if len(t.h) < t.n {
		t.h = append(t.h, v)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if t.cmp(t.h[i], t.h[p]) <= 0 {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if t.n == 0 || t.cmp(v, t.h[0]) >= 0 {
		return
	}
	t.h[0] = v
	for i := 0; ; {
		g, l, r := i, 2*i+1, 2*i+2
		if l < len(t.h) && t.cmp(t.h[l], t.h[g]) > 0 {
			g = l
		}
		if r < len(t.h) && t.cmp(t.h[r], t.h[g]) > 0 {
			g = r
		}
		if g == i {
			return
		}
		t.h[i], t.h[g] = t.h[g], t.h[i]
		i = g
	}
}

// Sorted is what was kept, least first.
func (t *Top[T]) Sorted() []T {
	out := slices.Clone(t.h)
	slices.SortStableFunc(out, t.cmp)
	return out
}

package scan

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
)

// Pattern is a regular expression over command lines, with the literals
// of which each of its matches holds at least one: a command line that
// holds none is passed over without running the expression. A scan tries
// every client's marks on the command line of every orphaned tree's root,
// and Go's regexp costs about 0.35 µs a call even on a short line that
// fails at once: on a table with a thousand orphans that was 14 ms of a
// 10,000-process scan, more than the orphans' details took to read.
//
// A Pattern is compiled when it is first matched, not when it is made:
// the clients' marks are package-level values, and compiling them all
// cost every start of reaper — `reaper version` as much as a scan — a
// millisecond and 300 KB before main.
type Pattern struct {
	expr string
	// needles: every match holds one of them (nil: none is known, and the
	// expression always runs), found once, when first matched.
	parse   sync.Once
	needles []needle
	// re is compiled once, when a string holds a needle: at a quiet table
	// most of reaper's expressions never are.
	compile sync.Once
	re      *regexp.Regexp
}

// needle is a literal every match holds (or one of others), fold: in any
// case (ASCII letters only: see foldable).
type needle struct {
	s    string
	fold bool
}

// NewPattern is re with the literals its matches hold (found when it is
// first matched).
func NewPattern(re *regexp.Regexp) *Pattern { return &Pattern{expr: re.String(), re: re} }

// MustPattern is expr as a Pattern, compiled when it is first matched (a
// bad expression panics then, as regexp.MustCompile does): for the
// expressions written in reaper's source, each of which its tests match.
func MustPattern(expr string) *Pattern { return &Pattern{expr: expr} }

// load compiles the expression, once.
func (p *Pattern) load() {
	p.compile.Do(func() {
		if p.re == nil {
			p.re = regexp.MustCompile(p.expr)
		}
	})
}

// findNeedles finds the expression's literals, once: its parse alone, a
// fraction of its compilation.
func (p *Pattern) findNeedles() {
	p.parse.Do(func() {
		if tree, err := syntax.Parse(p.expr, syntax.Perl); err == nil {
			p.needles = required(tree)
		}
	})
}

// String is the expression's source text.
func (p *Pattern) String() string { return p.expr }

// Regexp is the compiled expression.
func (p *Pattern) Regexp() *regexp.Regexp {
	p.load()
	return p.re
}

// MatchString reports whether s holds a match of the expression.
func (p *Pattern) MatchString(s string) bool {
	p.findNeedles()
	if p.needles != nil && !holdsAny(s, p.needles) {
		return false
	}
	p.load()
	return p.re.MatchString(s)
}

// holdsAny reports whether s holds one of needles.
func holdsAny(s string, needles []needle) bool {
	for _, n := range needles {
		if n.fold && ContainsFold(s, n.s) || !n.fold && strings.Contains(s, n.s) {
			return true
		}
	}
	return false
}

// ContainsFold reports whether s holds lower (ASCII, lower case) in any
// case: ASCII letters alone fold, as SQLite's LIKE folds them.
func ContainsFold(s, lower string) bool {
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for j < len(lower) && toLower(s[i+j]) == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldPart is the longest run of lit whose runes match, in any case,
// only ASCII: not k and s, which (?i) also matches as U+212A (Kelvin) and
// U+017F (long s). Every match of lit holds it, in some case.
func foldPart(lit []rune) string {
	var best, run []rune
	for _, r := range lit {
		ok := r <= unicode.MaxASCII
		for f := unicode.SimpleFold(r); ok && f != r; f = unicode.SimpleFold(f) {
			ok = f <= unicode.MaxASCII
		}
		if !ok {
			run = run[:0]
			continue
		}
		run = append(run, r)
		if len(run) > len(best) {
			best = append(best[:0], run...)
		}
	}
	return strings.ToLower(string(best))
}

// required returns literals of which every match of re holds at least
// one, or nil when it knows none. It is sound by construction: a
// concatenation's match holds a match of each part (the part whose
// literals are longest is taken), an alternation's a match of one branch
// (every branch must give literals, and their union is taken), a capture,
// a + and a repeat of at least one a match of what they wrap. A literal
// matched without regard to case gives its longest part of ASCII that
// folds to ASCII alone (foldPart).
func required(re *syntax.Regexp) []needle {
	switch re.Op {
	case syntax.OpLiteral:
		switch {
		case len(re.Rune) == 0:
			return nil
		case re.Flags&syntax.FoldCase == 0:
			return []needle{{s: string(re.Rune)}}
		}
		if part := foldPart(re.Rune); part != "" {
			return []needle{{s: part, fold: true}}
		}
		return nil
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []needle
		for _, sub := range re.Sub {
			if n := required(sub); n != nil && (best == nil || shortest(n) > shortest(best)) {
				best = n
			}
		}
		return best
	case syntax.OpAlternate:
		var all []needle
		for _, sub := range re.Sub {
			n := required(sub)
			if n == nil {
				return nil
			}
			all = append(all, n...)
		}
		return all
	}
	return nil
}

// shortest is the length of the shortest of needles.
func shortest(needles []needle) int {
	n := len(needles[0].s)
	for _, s := range needles[1:] {
		n = min(n, len(s.s))
	}
	return n
}

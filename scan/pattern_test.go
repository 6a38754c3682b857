package scan

import (
	"regexp"
	"slices"
	"testing"
)

// The literals a pattern requires: each is what every match must hold
// one of, and none where that is not so.
func TestPatternNeedles(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`(^|/)kilo( |$)|/@kilocode/cli/`, []string{"kilo", "/@kilocode/cli/"}},
		{`claude-agent-acp|claude-code-acp|(^|/)claude( |$)`, []string{"agent-acp", "code-acp", "claude"}}, // the parser factors "claude-" out
		{`/shell-snapshots/snapshot-[a-z]+-[^ ]*\.sh`, []string{"/shell-snapshots/snapshot-"}},
		{`(ab)+c?`, []string{"ab"}},
		{`x{2,}`, []string{"x"}},
		{`a*`, nil},
		{`x?y?`, nil},
		{`abc|d*`, nil}, // a branch that needs nothing
		{`(?i)MCP-remote`, []string{"(?i)mcp-remote"}},
		{`(?i)server`, []string{"(?i)erver"}}, // (?i)s also matches U+017F
		{`(?i)ks`, nil},
		{`(?i)mcp[-_]server|fastmcp`, []string{"(?i)erver", "(?i)tmcp"}},
		{`[ab]`, nil},
	} {
		var got []string
		p := NewPattern(regexp.MustCompile(tt.expr))
		p.findNeedles()
		for _, n := range p.needles {
			if n.fold {
				n.s = "(?i)" + n.s
			}
			got = append(got, n.s)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: needles %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// FuzzPattern checks that the needles never change an answer: a Pattern
// matches exactly what its expression matches. The seeds are the
// clients' marks and command lines that meet them.
func FuzzPattern(f *testing.F) {
	exprs := []string{
		`(^|/)\.?kilo( |$)|/@kilocode/cli/`, `codex-acp|(^|/)codex( |$)`,
		`claude-agent-acp|claude-code-acp|(^|/)claude( |$)`, `/shell-snapshots/snapshot-[a-z]+-[^ ]*\.sh`,
		`(^|/)copilot( |$)|/@github/copilot(-[a-z0-9-]+)?/`, `-acp-wrapper\.mjs|--openclaw-acpx-lease-id|/acpx/dist/|(^|/)acpx( |$)`,
		`/process/spawn-broker/worker\.js( |$)`, `(a|bc)+d{2,3}(e|f*)`, `(?i)Mcp-server|fastmcp`, `(?i)kelvin`,
	}
	lines := []string{"", "sleep 7200", "/usr/bin/claude --resume", "node /x/@kilocode/cli/index.js", "codex", "kilo",
		"bash -c source /root/.claude/shell-snapshots/snapshot-bash-1.sh", "acpx", "bcadd", "abcdddf",
		"npx MCP-Server-fs", "\u212aelvin", "FastMCP run"}
	for _, e := range exprs {
		for _, l := range lines {
			f.Add(e, l)
		}
	}
	f.Fuzz(func(t *testing.T, expr, line string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		if got, want := NewPattern(re).MatchString(line), re.MatchString(line); got != want {
			t.Errorf("%q on %q: %v, the expression alone %v (needles %+v)", expr, line, got, want, NewPattern(re).needles)
		}
	})
}

// TestPatternCompiledWhenNeeded: a string that holds none of an
// expression's literals is answered without compiling it — at a quiet
// table most of reaper's expressions never are; the control, a string
// that holds one, compiles and matches.
func TestPatternCompiledWhenNeeded(t *testing.T) {
	p := MustPattern(`(^|/)kilo( |$)|/@kilocode/cli/`)
	if p.MatchString("/usr/bin/bash -l") || p.re != nil {
		t.Fatalf("compiled for a string without its literals: %v", p.re)
	}
	if !p.MatchString("/usr/local/bin/kilo --acp") || p.re == nil {
		t.Errorf("control: not matched, or matched uncompiled")
	}
	if q := MustPattern(`a*`); !q.MatchString("b") || q.re == nil {
		t.Errorf("an expression with no literals is not run")
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// TestScanMCPServerFromOpenClawConfig: an orphaned stdio MCP server whose
// command line no fingerprint knows is kind other, and the rule for agent
// trees does not take it; with the OpenClaw state dir whose openclaw.json
// (JSON5) names it, the same process is kind mcp, the rule takes it, and
// the config is its evidence.
func TestScanMCPServerFromOpenClawConfig(t *testing.T) {
	clitest.BecomeSubreaper(t)
	// The server: a copy of sleep under a name no fingerprint knows.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		skips.Skip(t, "no sleep binary")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "docs-helper")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	pid := adoptShell(t, fmt.Sprintf("exec %q 600", bin), nil)

	state := t.TempDir()
	config := `{
  // what a person writes in ~/.openclaw/openclaw.json
  mcp: { servers: {
    docs: { command: 'docs-helper', args: ['600'], },
  } },
}`
	if err := os.WriteFile(filepath.Join(state, "openclaw.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	pol := reapPolicy(t, "")
	kindOf := func(rep *clitest.ScanReport) (kind, rule string, evidence []string, ok bool) {
		for _, f := range rep.Findings {
			if f.RootPID == pid {
				return f.Kind, f.Rule, f.Evidence, true
			}
		}
		return "", "", nil, false
	}
	// Control: without the config it is some orphan of kind other, which no
	// rule of this policy takes, so the report leaves it out (unmatched).
	if kind, _, _, ok := kindOf(clitest.ScanJSON(t, "--policy", pol)); ok {
		t.Fatalf("without the config: a finding of kind %q, want none", kind)
	}
	kind, rule, evidence, ok := kindOf(clitest.ScanJSON(t, "--policy", pol, "--ledger", state))
	if !ok || kind != "mcp" || rule != "orphaned-agent-trees" {
		t.Errorf("with the config: kind %q rule %q, want mcp and the agent-trees rule", kind, rule)
	}
	if !strings.Contains(strings.Join(evidence, "; "), `MCP server "docs" of `+filepath.Join(state, "openclaw.json")) {
		t.Errorf("evidence %q does not name the config", evidence)
	}
	// A config that does not parse is a warning, not a failure, and
	// classifies nothing.
	if err := os.WriteFile(filepath.Join(state, "openclaw.json"), []byte("{\n  mcp: { servers: \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", pol, "--ledger", state)
	var rep struct{ Warnings []string }
	if err := json.Unmarshal([]byte(r.Stdout), &rep); r.Code != 0 || err != nil {
		t.Fatalf("broken config: exit %d, %v\n%s", r.Code, err, r.Stderr)
	}
	want := filepath.Join(state, "openclaw.json") + ":2:" // the line where the document stops
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("broken config: warnings %q, want one at %s", rep.Warnings, want)
	}
}

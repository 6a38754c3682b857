package scan

import (
	"fmt"
	"regexp"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/openclaw"
	"github.com/orphanreaper/reaper/platform"
)

// Kind says what a tree is, from the ledger when a run names it, else from
// fingerprints of its root: the ledger's kinds.
type Kind = ledger.Kind

// The kinds of SPEC §8.
const (
	KindPTY   = ledger.KindPTY
	KindACP   = ledger.KindACP
	KindMCP   = ledger.KindMCP
	KindExec  = ledger.KindExec
	KindOther = ledger.KindOther
)

// Kinds lists every kind, for validation.
var Kinds = ledger.Kinds

var (
	// acpCommand matches ACP wrappers and adapters as OpenClaw launches them
	// (extensions/acpx: <state>/acpx/*-acp-wrapper.mjs with the lease flags;
	// @agentclientprotocol/claude-agent-acp, @zed-industries/codex-acp; the
	// acpx CLI) and the agent CLIs they drive (claude, codex app-server).
	acpCommand = regexp.MustCompile(`-acp-wrapper\.mjs|claude-agent-acp|claude-code-acp|codex-acp|` +
		`@agentclientprotocol/|--openclaw-acpx-lease-id|/acpx/dist/|(^|/)acpx( |$)|` +
		`(^|/)(claude|codex)( |$)`)
	// mcpCommand matches MCP servers and their wrappers: the SDK's packages,
	// mcp-remote, and the naming convention *-mcp, mcp-server-*, *_mcp.
	mcpCommand = regexp.MustCompile(`(?i)modelcontextprotocol|mcp-remote|mcp[-_]server|` +
		`[-_@/]mcp([-_ /.@]|$)|(^|[/ ])mcp[-_]|fastmcp`)
)

// Classify returns the kind of the tree rooted at p by fingerprint:
// a session leader on a pseudo-terminal is a PTY shell (its controlling
// terminal, or — once the master is gone and the kernel cleared it — the
// terminal its stdio still holds); then ACP and MCP
// command lines; then OpenClaw's OPENCLAW_SHELL marker (acp, exec).
// Checking ACP before MCP matters: agent CLIs carry --mcp-config.
func Classify(s *platform.Snapshot, p *platform.Process) Kind {
	if s.PTYShell(p) {
		return KindPTY
	}
	cmd := s.CommandLine(p)
	shell, _ := s.Getenv(p, openclaw.EnvShell)
	switch {
	case acpCommand.MatchString(cmd):
		return KindACP
	case mcpCommand.MatchString(cmd):
		return KindMCP
	case shell == "acp" || shell == "acp-client":
		return KindACP
	case shell == "exec":
		return KindExec
	}
	return KindOther
}

// ApplyMCPServers gives kind mcp to each finding of kind other whose root
// is one of the stdio MCP servers a gateway's config names: OpenClaw
// spawns those with a scrubbed environment, so neither a marker nor, for a
// server with an unusual name, the fingerprints above say what they are
// (SPEC §7: argv matched against mcp.servers in openclaw.json). Only the
// kind changes, never the reasons: a finding is a finding on its own
// evidence.
func (r *Result) ApplyMCPServers(servers []openclaw.MCPServer) {
	if len(servers) == 0 {
		return
	}
	s := r.Tree.Snap
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Kind != KindOther {
			continue
		}
		words := openclaw.Words(s.Cmdline(f.Root))
		for k := range servers {
			if servers[k].MatchesWords(words) && r.speaks(servers[k].UID, f.Root, "MCP server "+servers[k].Name+" of "+servers[k].File) {
				f.Kind = KindMCP
				f.Evidence = append(f.Evidence, fmt.Sprintf("its command line is MCP server %q of %s", servers[k].Name, servers[k].File))
				break
			}
		}
	}
}

package scan

import (
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/openclaw"
	"github.com/orphanreaper/reaper/platform"
)

// Gather reads a scan's evidence, given the live owners the scan met and
// the roots of the trees it found orphaned (whose environments may name
// the state of the owner that left them).
type Gather func(liveOwners, roots []*platform.Process) (Evidence, error)

// Evidence is what a run read besides the process table: ledgers (files
// and OpenClaw's state as ledgers), the gateways OpenClaw's locks name, the
// stdio MCP servers its configs name, and, for advice, what each state dir
// says.
type Evidence struct {
	Ledgers  []*ledger.Ledger
	Gateways []openclaw.Gateway
	Servers  []openclaw.MCPServer
	// States are the OpenClaw state dirs for advice; Advise false gives
	// none (and spends no sampling window).
	States []OpenClawState
	Advise bool
	Sample Sampler
}

// apply folds the evidence into the result in the one order that is
// right: the ledgers first (an owned run leaves the findings before
// anything is attributed, a proven run becomes a finding of its own), then
// OpenClaw's gateways for what no ledger claimed, then the configured MCP
// servers (the kind only), and the advice last, over the final findings.
func (r *Result) apply(ev Evidence) {
	r.ApplyLedgers(ev.Ledgers)
	r.ApplyOpenClawGateways(ev.Gateways)
	r.ApplyMCPServers(ev.Servers)
	if ev.Advise {
		r.Advise(ev.States, ev.Sample)
	}
}

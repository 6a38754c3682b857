package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// ptyOptions are the flags of `reaper pty`.
type ptyOptions struct {
	policyFile string
	output     string
}

func newPtyCommand(g *globalOptions) *cobra.Command {
	var opts ptyOptions
	cmd := &cobra.Command{
		Use:   "pty",
		Short: "Report every pseudo-terminal in use: who holds it, and which are dead",
		Long: `pty reads every process's open file descriptors (this is the one report
that does: it costs a directory read per process) and lists each
pseudo-terminal with the processes holding its master (/dev/ptmx) and its
slave (/dev/pts/N). A PTY is dead when processes hold its slave but its
master was closed (the holder died: the slave is hung up), or only
findings of the policy hold the master; scan judges the PTYs its findings
hold the same way. A slave that is not hung up has an open master: one no
process here holds is "not visible" (another PID namespace, or fds that
could not be read), never dead. Against
kernel.pty.max, leftovers that hold PTYs eventually stop new shells.

Reading other users' fds needs root (CAP_SYS_PTRACE); without it their
PTYs are not seen.`,
		Example: "  reaper pty\n  reaper pty --output json | jq '.dead'",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(&opts.output); err != nil {
				return err
			}
			return runPty(&opts, g)
		},
	}
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "policy `FILE` (to know which processes are findings; default as for scan)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runPty(opts *ptyOptions, g *globalOptions) error {
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	t, err := collect(context.Background(), pol, "", nil, 0, true, false)
	if err != nil {
		return err
	}
	defer t.Snap.Close()
	s := t.Snap
	plan := pol.Plan(t.Result, policy.PlanOptions{Mode: policy.ModeScan, UID: t.UID()})
	member := map[int]bool{}
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			member[m.Proc.PID] = true
		}
	}
	holds := map[*platform.Process][]platform.PTYHold{}
	unreadable := 0
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.KernelThread() || p.Zombie() {
			continue
		}
		h, err := s.PTYHolds(p)
		if err != nil {
			unreadable++
			continue
		}
		if len(h) > 0 {
			holds[p] = h
		}
	}
	// Every holder is seen only when every process's fds were read, in the
	// host's PID namespace.
	scope := scan.AllProcesses
	if unreadable > 0 || !host.HostPIDNamespace() {
		scope = scan.Incomplete
	}
	states := scan.PTYStates(holds, scope, func(pid int) bool { return member[pid] })
	out := &audit.PTYView{SchemaVersion: 1, InUse: s.PTY.InUse, Max: s.PTY.Max, PTYs: []audit.PTYEntry{}, Dead: []int{},
		Unreadable: unreadable, AsRoot: os.Geteuid() == 0}
	toHolders := func(ps []*platform.Process) []audit.PTYHolder {
		hs := []audit.PTYHolder{}
		for _, p := range ps {
			hs = append(hs, audit.PTYHolder{PID: p.PID, Cmdline: s.CommandLine(p), InFinding: member[p.PID]})
		}
		return hs
	}
	for _, st := range states {
		out.PTYs = append(out.PTYs, audit.PTYEntry{PTS: st.PTS, Dead: st.Dead, Why: st.Why, Masters: toHolders(st.Masters), Slaves: toHolders(st.Slaves)})
		if st.Dead {
			out.Dead = append(out.Dead, st.PTS)
		}
	}
	return g.write(out, opts.output)
}

package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

func newExplainCommand(g *globalOptions) *cobra.Command {
	var opts scanOptions
	cmd := &cobra.Command{
		Use:   "explain PID",
		Short: "Say why one process is, or is not, in a finding, and what every rule makes of it",
		Long: `explain scans as scan does (it never sends a signal) and then tells the
story of one process: who it is, its ancestors up to PID 1 and what the
scan makes of each (init, a subreaper, a live owner), whether its tree is
a finding and why (reasons and evidence), and every rule of the policy in
order: the one that matches first, and why each before it does not.

Exit status: 0 (whatever the verdict), 2 a bad PID, 66 no such process.`,
		Example: `  reaper explain 4242
  reaper explain 4242 --policy /etc/reaper/policy.toml -o json`,
		Args: oneArg("PID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			pid, err := strconv.Atoi(args[0])
			if err != nil || pid <= 0 {
				return usagef("%q is not a process id", args[0])
			}
			return runExplain(cmd.Context(), pid, &opts, g)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "policy `FILE` (default: the one scan uses)")
	f.StringArrayVar(&opts.ledgers, "ledger", nil, "a ledger `PATH`, as scan takes it; repeatable")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	f.StringVar(&opts.procRoot, "proc", "", "read this `DIR` instead of /proc (Linux; fixtures)")
	f.DurationVar(&opts.timeout, "timeout", 0, "bound on the whole run (default 60s)")
	return cmd
}

func runExplain(ctx context.Context, pid int, opts *scanOptions, g *globalOptions) error {
	if err := validateOutput(&opts.output); err != nil {
		return err
	}
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	timeout := opts.scanTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t, err := collect(ctx, pol, opts.procRoot, opts.ledgers, timeout, true, false)
	if err != nil {
		return err
	}
	defer t.Snap.Close()
	s := t.Snap
	i := s.Index(pid)
	if i < 0 {
		return noInputError{fmt.Errorf("no process %d in the process table", pid)}
	}
	p := &s.Procs[i]
	t.Result.ResolveAllInUse() // a person asks: who writes to every open stdin
	plan := pol.Plan(t.Result, policy.PlanOptions{Mode: policy.ModeScan, UID: t.UID(), Doubts: t.Doubts})
	rep := run.Report(t, pol, plan, opts.all)

	e := &audit.Explanation{SchemaVersion: audit.SchemaVersion, Policy: rep.Policy, PID: pid,
		Cmdline: s.CommandLine(p), AgeSeconds: int64(s.Age(p) / time.Second), RSSBytes: p.RSS, Rules: []policy.RuleVerdict{}}
	e.UID, e.User = audit.ProcessUser(s, p)
	e.Ancestors = ancestors(t.Result, i)

	switch {
	case p.KernelThread():
		e.Verdict, e.Why = "kernel-thread", "a kernel thread: never a finding, never signalled"
	case p.Zombie():
		e.Verdict, e.Why = "zombie", "a zombie: it has exited, and only its parent can clear it; never signalled"
	}
	if e.Verdict == "" {
		for k := range rep.Findings {
			if f := &rep.Findings[k]; slices.Contains(f.PIDs, pid) {
				e.Verdict, e.Finding = "finding", f
				e.Why = fmt.Sprintf("its tree (root %d) is orphaned and rule %q matches it", f.RootPID, f.Rule)
			}
		}
		for _, it := range plan.Items {
			if e.Finding != nil && it.Finding.Root.PID == e.Finding.RootPID {
				e.Rules = pol.Verdicts(s, it.Finding)
			}
		}
	}
	if e.Verdict == "" {
		for _, f := range plan.UnmatchedFindings {
			if slices.ContainsFunc(f.Members, func(m scan.Member) bool { return m.Proc.PID == pid }) {
				e.Verdict = "unmatched"
				e.Why = fmt.Sprintf("its tree (root %d) is orphaned, but no rule of the policy matches it: it is only listed (scan --all)", f.Root.PID)
				e.Finding = audit.NewFinding(s, f)
				e.Rules = pol.Verdicts(s, f)
			}
		}
	}
	if e.Verdict == "" {
		e.Verdict, e.Why = "not-orphaned", notOrphaned(t.Result, i)
	}
	return g.write(e, opts.output)
}

// ancestors lists the processes above index i, each with its role.
func ancestors(res *scan.Result, i int) []audit.Ancestor {
	t, s := res.Tree, res.Tree.Snap
	out := []audit.Ancestor{}
	t.Ancestors(i, func(j int) bool {
		a := &s.Procs[j]
		role := ""
		switch {
		case a.PID == 1:
			role = "init"
		case res.IsSubreaper(j):
			role = "subreaper"
		}
		if name, ok := res.LiveOwner(a); ok {
			role = strings.TrimSpace(role + " live owner " + name)
		}
		out = append(out, audit.Ancestor{PID: a.PID, Cmdline: s.CommandLine(a), Role: role})
		return true
	})
	return out
}

// notOrphaned says why the process at index i is in no finding.
func notOrphaned(res *scan.Result, i int) string {
	t, s := res.Tree, res.Tree.Snap
	p := &s.Procs[i]
	if why, ok := res.OwnedRun(p.PID); ok {
		return "a live owner's running run: " + why
	}
	if why, ok := res.InUse(p.PID); ok {
		return "reparented, but " + why + ": that process still speaks to it"
	}
	var owner string
	t.Ancestors(i, func(j int) bool {
		if name, ok := res.LiveOwner(&s.Procs[j]); ok {
			owner = fmt.Sprintf("%s (pid %d)", name, s.Procs[j].PID)
			return false
		}
		return true
	})
	if owner != "" {
		return "a live owner holds it: its ancestor " + owner + " is running"
	}
	parent := t.Parent(i)
	switch {
	case p.PID == 1:
		return "PID 1 is init"
	case parent < 0:
		return fmt.Sprintf("its parent %d is not visible here (hidepid, or another PID namespace): never treated as an orphan", p.PPID)
	}
	// The top of its tree: the last ancestor below init or a subreaper.
	top := i
	t.Ancestors(i, func(j int) bool {
		if s.Procs[j].PID == 1 || res.IsSubreaper(j) {
			return false
		}
		top = j
		return true
	})
	tp := t.Parent(top)
	if tp >= 0 && (s.Procs[tp].PID == 1 || res.IsSubreaper(tp)) {
		return fmt.Sprintf("its tree's top, %d, is a child of %d (%s) but is not an orphan the scan takes: a service, a login session or a protected process, not an agent's leftover",
			s.Procs[top].PID, s.Procs[tp].PID, s.CommandLine(&s.Procs[tp]))
	}
	return fmt.Sprintf("its parent %d (%s) is alive and is neither init nor a subreaper: it was never reparented", s.Procs[parent].PID, s.CommandLine(&s.Procs[parent]))
}

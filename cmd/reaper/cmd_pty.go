package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
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
master was closed (the holder died: the slave is hung up), no live process
holds the master, or only findings of the policy hold it. Against
kernel.pty.max, leftovers that hold PTYs eventually stop new shells.

Reading other users' fds needs root (CAP_SYS_PTRACE); without it their
PTYs are not seen.`,
		Example: "  reaper pty\n  reaper pty --output json | jq '.dead'",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(opts.output); err != nil {
				return err
			}
			return runPty(&opts, g)
		},
	}
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "policy `FILE` (to know which processes are findings; default as for scan)")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	return cmd
}

// ptyEntry is one PTY in `reaper pty --output json`.
type ptyEntry struct {
	PTS     int      `json:"pts"`
	Dead    bool     `json:"dead"`
	Why     string   `json:"why,omitempty"`
	Masters []holder `json:"masters"`
	Slaves  []holder `json:"slaves"`
}

type holder struct {
	PID       int    `json:"pid"`
	Cmdline   string `json:"cmdline"`
	InFinding bool   `json:"in_finding"`
}

func runPty(opts *ptyOptions, g *globalOptions) error {
	pol, err := resolvePolicy(opts.policyFile)
	if err != nil {
		return err
	}
	run, err := collectWith(pol, "", nil, true, false)
	if err != nil {
		return err
	}
	defer run.snap.Close()
	s := run.snap
	plan := pol.Plan(run.result, policy.PlanOptions{Mode: policy.ModeScan, UID: euid()})
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
	states := scan.PTYStates(holds, unreadable == 0, func(pid int) bool { return member[pid] })
	out := struct {
		SchemaVersion int        `json:"schema_version"`
		InUse         int        `json:"in_use"`
		Max           int        `json:"max"`
		PTYs          []ptyEntry `json:"ptys"`
		Dead          []int      `json:"dead"`
		Unreadable    int        `json:"unreadable_processes"`
	}{SchemaVersion: 1, InUse: s.PTY.InUse, Max: s.PTY.Max, PTYs: []ptyEntry{}, Dead: []int{}, Unreadable: unreadable}
	toHolders := func(ps []*platform.Process) []holder {
		hs := []holder{}
		for _, p := range ps {
			hs = append(hs, holder{PID: p.PID, Cmdline: s.CommandLine(p), InFinding: member[p.PID]})
		}
		return hs
	}
	for _, st := range states {
		out.PTYs = append(out.PTYs, ptyEntry{PTS: st.PTS, Dead: st.Dead, Why: st.Why, Masters: toHolders(st.Masters), Slaves: toHolders(st.Slaves)})
		if st.Dead {
			out.Dead = append(out.Dead, st.PTS)
		}
	}
	if opts.output == "json" {
		return audit.WriteJSON(g.stdout, out)
	}
	fmt.Fprintf(g.stdout, "PTYs: %d in use of %d (kernel.pty.nr / kernel.pty.max); %d dead\n\n", out.InUse, out.Max, len(out.Dead))
	tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PTY\tSTATE\tMASTER HELD BY\tSLAVE HELD BY\n")
	names := func(hs []holder) string {
		var parts []string
		for _, h := range hs {
			mark := ""
			if h.InFinding {
				mark = "*"
			}
			parts = append(parts, fmt.Sprintf("%d%s %s", h.PID, mark, clipText(h.Cmdline)))
		}
		if len(parts) == 0 {
			return "—"
		}
		return strings.Join(parts, "; ")
	}
	for _, e := range out.PTYs {
		state := "in use"
		if e.Dead {
			state = "DEAD: " + e.Why
		}
		fmt.Fprintf(tw, "/dev/pts/%d\t%s\t%s\t%s\n", e.PTS, state, names(e.Masters), names(e.Slaves))
	}
	tw.Flush()
	if len(out.PTYs) == 0 {
		fmt.Fprintln(g.stdout, "No process holds a pseudo-terminal.")
	}
	starred := false
	for _, e := range out.PTYs {
		for _, h := range append(append([]holder{}, e.Masters...), e.Slaves...) {
			starred = starred || h.InFinding
		}
	}
	if starred {
		fmt.Fprintln(g.stdout, "\n* part of a finding of the policy")
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(g.stdout, "not root: other users' file descriptors were not read; their terminals are not shown")
	}
	if unreadable > 0 {
		fmt.Fprintf(g.stdout, "%s could not be read (other users'; run as root to see them)\n", countOf(unreadable, "process's fds", "processes' fds"))
	}
	return nil
}

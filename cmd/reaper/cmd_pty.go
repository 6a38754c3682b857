package main

import (
	"context"
	"github.com/orphanreaper/reaper/run"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/policy"
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
	pass, err := run.Scan(context.Background(), run.Config{Policy: pol, Clients: run.ClientsOf(clients, pol), Discover: true}, policy.ModeScan)
	if err != nil {
		return err
	}
	defer pass.Close()
	return g.write(pass.PTYs(), opts.output)
}

package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/doctor"
)

// doctorOptions are the flags of `reaper doctor`.
type doctorOptions struct {
	policyFile string
	lockFile   string
	output     string
	timeout    time.Duration
}

func newDoctorCommand(g *globalOptions) *cobra.Command {
	var opts doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check what reaper needs of this host, and how it is run here; never sends a signal",
		Example: `  sudo reaper doctor
  reaper doctor -o json | jq '.checks[] | select(.status != "ok")'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), &opts, g)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("doctor", "checks", doctor.ChecksHelp()) })
	f := cmd.Flags()
	f.StringVar(&opts.policyFile, "policy", "", "check this policy `FILE` (default: the one the timer's command line names, else the one scan uses)")
	f.StringVar(&opts.lockFile, "lock-file", "", "the lock `FILE` to look at (default: the timer's --lock-file, else reap's default)")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	f.DurationVar(&opts.timeout, "timeout", 0, "bound on the scan (default 60s)")
	return cmd
}

func runDoctor(ctx context.Context, opts *doctorOptions, g *globalOptions) error {
	if err := validateOutput(&opts.output); err != nil {
		return err
	}
	d, err := doctor.Diagnose(ctx, doctor.Config{Version: versionString(), PolicyFile: opts.policyFile, LockFile: opts.lockFile,
		Timeout: opts.timeout, Clients: clients})
	if err != nil {
		return err
	}
	if g.quiet && opts.output != "json" && !d.OnlyNotOK() {
		return nil
	}
	if err := g.write(d, opts.output); err != nil {
		return err
	}
	return d.Failed()
}

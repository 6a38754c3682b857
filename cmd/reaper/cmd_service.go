package main

import (
	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

func newServiceCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install or remove reaper's background service for this binary",
	}
	g.help.Set(cmd, func() string {
		return docs.Help("service", "WatchUnit", setup.WatchUnit, "ReapUnit", setup.ReapUnit, "TimerUnit", setup.TimerUnit)
	})
	cmd.Args = noArgs // an unknown subcommand is a usage error, not help
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	cmd.AddCommand(newServiceInstallCommand(g), newServiceUninstallCommand(g))
	return cmd
}

func serviceFlags(cmd *cobra.Command, svc *setup.Service) {
	f := cmd.Flags()
	f.BoolVar(&svc.User, "user", run.EUID() != 0, "this user's service (the default when not root)")
	f.BoolVar(&svc.DryRun, "dry-run", false, "print what would be written and run, and change nothing")
	f.StringVar(&svc.Root, "root", "", "write below `DIR` and ask no service manager (tests)")
	f.MarkHidden("root")
	f.StringVar(&svc.Task, "task", "", "the logon task's `NAME` on Windows, registered and not started (tests; default "+setup.TaskName+")")
	f.MarkHidden("task")
}

func newServiceInstallCommand(g *globalOptions) *cobra.Command {
	svc := &setup.Service{Out: g.stdout}
	cmd := &cobra.Command{
		Use:   "install [--user] [--timer] [--dry-run]",
		Short: "Write, enable and start the service for this binary",
		Example: `  sudo reaper service install          # every user's, reaper watch as root
  sudo reaper service install --binary /usr/local/bin/reaper
  reaper service install --user         # this user's processes only
  reaper service install --timer --dry-run`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			svc.Out, svc.PolicyPath = g.stdout, paths.Current().Policy
			return svc.Install(cmd.Context())
		},
	}
	serviceFlags(cmd, svc)
	cmd.Flags().BoolVar(&svc.Timer, "timer", false, "a reap every minute (reaper.timer; on macOS StartInterval) instead of reaper watch")
	cmd.Flags().StringVar(&svc.Binary, "binary", "", "the reaper binary the service runs (`PATH`, absolute), instead of this one: for a system service, one only root can replace")
	return cmd
}

func newServiceUninstallCommand(g *globalOptions) *cobra.Command {
	svc := &setup.Service{Out: g.stdout}
	cmd := &cobra.Command{
		Use:   "uninstall [--user] [--dry-run]",
		Short: "Stop, disable and remove what service install wrote",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			svc.Out = g.stdout
			return svc.Uninstall(cmd.Context())
		},
	}
	serviceFlags(cmd, svc)
	return cmd
}

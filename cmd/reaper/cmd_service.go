package main

import (
	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

func newServiceCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install or remove reaper's background service for this binary",
		Long: `service writes, enables and starts the background service the packages
give — for this binary, wherever it is (npm, go install, an archive):

  Linux    a systemd unit: /etc/systemd/system as root, else the user's
           ~/.config/systemd/user (--user); reaper-watch.service, or
           reaper.service and reaper.timer with --timer
  macOS    a launchd plist: a LaunchDaemon in /Library/LaunchDaemons as
           root, else a LaunchAgent in ~/Library/LaunchAgents, its log in
           ~/Library/Logs/reaper

Each file is the shipped one with this binary's absolute path (or
--binary's), and says it was written by 'reaper service install'.

A system service runs as root, so it refuses a binary any other user
could replace — the file, or a directory above it, owned by a user or
writable by group or others, as 'go install' (~/go/bin), a user's npm
prefix or Homebrew's prefix leave it: whoever can replace it would run
code as root at the next start. Copy it where only root writes, and
install that copy:

  sudo install -m 0755 "$(command -v reaper)" /usr/local/bin/reaper
  sudo /usr/local/bin/reaper service install

or pass --binary with a root-owned copy. The .deb, .rpm and a root npm
install (/usr/lib/node_modules) are root's already. Running it again changes
nothing that is already so; --dry-run prints what it would write and run.
'reaper service uninstall' stops, disables and removes what install
wrote, and nothing else. 'reaper doctor' checks the result.`,
	}
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
			svc.Out, svc.PolicyPath = g.stdout, run.PolicyPath()
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

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/setup"
)

// hookClients are the clients with session hooks reaper can install, by
// name.
func hookClients() map[string]client.Info {
	out := map[string]client.Info{}
	for _, c := range clients.All() {
		if in := c.Info(); in.Hook != nil {
			out[in.Name] = in
		}
	}
	return out
}

func newHookCommand(g *globalOptions) *cobra.Command {
	var list strings.Builder
	for _, c := range clients.All() {
		if in := c.Info(); in.Hook != nil {
			place, moved := setup.HookPlace(in.Hook)
			fmt.Fprintf(&list, "  %-13s %s: %s in %s\n", in.Name, in.Title, in.Hook.Event, place)
			if moved != "" {
				fmt.Fprintf(&list, "%16s(or %s)\n", "", moved)
			}
		}
	}
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Wire a quick reap of your leftovers into an agent client's session start",
	}
	g.help.Set(cmd, func() string { return docs.Help("hook", "clients", list.String()) })
	cmd.Args = noArgs // an unknown subcommand is a usage error, not help
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	cmd.AddCommand(newHookInstallCommand(g, true), newHookInstallCommand(g, false))
	return cmd
}

func newHookInstallCommand(g *globalOptions, install bool) *cobra.Command {
	hook := &setup.Hook{Out: g.stdout}
	var settings string
	use, short := "install CLIENT", "Add the session-start reap to a client's hooks"
	if !install {
		use, short = "uninstall CLIENT", "Remove the session-start reap from a client's hooks"
	}
	var names []string
	for name := range hookClients() {
		names = append(names, name)
	}
	cmd := &cobra.Command{
		Use:       use,
		Short:     short,
		Example:   "  reaper hook " + strings.Fields(use)[0] + " claude-code --dry-run",
		Args:      oneArg("CLIENT"),
		ValidArgs: names,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, ok := hookClients()[args[0]]
			if !ok {
				return usagef("hook: %q has no session hooks reaper knows: %s", args[0], strings.Join(names, ", "))
			}
			hook.Client, hook.Out = in, g.stdout
			path := settings
			if path == "" {
				home, _ := os.UserHomeDir()
				var err error
				if path, err = hook.Settings(os.Getenv, home); err != nil {
					return err
				}
			} else if !filepath.IsAbs(path) {
				return usagef("hook: --%s %q: not an absolute path", setup.SettingsFlag, path)
			}
			if !install {
				return hook.Uninstall(path)
			}
			exe, note, err := setup.PlannedExecutable(hook.DryRun)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(g.stdout, note)
			}
			hook.PolicyPath = paths.Current().Policy
			return hook.Install(path, exe)
		},
	}
	cmd.Flags().BoolVar(&hook.DryRun, "dry-run", false, "print the change, and change nothing")
	// Hidden: how root hands a user's settings file to a child running
	// as that user (setup.Hook), not a flag for people.
	cmd.Flags().StringVar(&settings, setup.SettingsFlag, "", "the settings file to edit (root's child, as the file's user)")
	cmd.Flags().MarkHidden(setup.SettingsFlag)
	return cmd
}

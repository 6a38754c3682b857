package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/packaging"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

type initOptions struct{ yes, dryRun, noService, noHooks bool }

func newInitCommand(g *globalOptions) *cobra.Command {
	var opts initOptions
	cmd := &cobra.Command{
		Use:     "init [--yes] [--dry-run]",
		Short:   "Set reaper up to act, in one step: policy, hooks and service",
		Example: "  reaper init\n  reaper init --dry-run\n  reaper init --yes --no-service",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return runInit(cmd, &opts, g) },
	}
	g.help.Set(cmd, func() string { return docs.Help("init") })
	f := cmd.Flags()
	f.BoolVarP(&opts.yes, "yes", "y", false, "do it without asking")
	f.BoolVar(&opts.dryRun, "dry-run", false, "show the plan and change nothing")
	f.BoolVar(&opts.noService, "no-service", false, "install no service")
	f.BoolVar(&opts.noHooks, "no-hooks", false, "install no client hooks")
	return cmd
}

func runInit(cmd *cobra.Command, opts *initOptions, g *globalOptions) error {
	example, err := fs.ReadFile(packaging.Files, "policy.example.toml")
	if err != nil {
		return err
	}
	exe, note, err := setup.PlannedExecutable(opts.dryRun)
	if err != nil {
		return err
	}
	if note != "" {
		defer fmt.Fprintln(g.stdout, "\n"+note) // after the plan it is about
	}
	home, _ := os.UserHomeDir()
	in := &setup.Init{PolicyPath: paths.Current().Policy, Policy: example, Exe: exe, Out: g.stdout}
	if in.PolicyPath == "" {
		return errors.New("no home directory: nowhere to write this user's policy")
	}
	if !opts.noHooks {
		in.Hooks = setup.FindHooks(clients, os.Getenv, home)
	}
	if !opts.noService && setup.HasServiceManager() {
		in.Service = &setup.Service{User: run.EUID() != 0}
	}
	var pol *policy.Policy
	what := "Your policy, " + in.PolicyPath + ","
	if in.PolicyExists() {
		pol, err = resolvePolicy(in.PolicyPath)
	} else {
		what = "The shipped example policy, to be written to " + in.PolicyPath + ","
		pol, err = policy.Parse(in.PolicyPath, example, run.PolicyClients(clients))
	}
	if err != nil {
		return err
	}
	pass, err := run.Scan(cmd.Context(), run.NewConfig(pol, clients), policy.ModeDryRun)
	if err != nil {
		return err
	}
	defer pass.Close()
	fmt.Fprintf(g.stdout, "%s would do this on this machine now (a dry run):\n\n", what)
	if err := g.write(pass.Report(), "table"); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "\nreaper init will:\n  %s\n", strings.Join(in.Steps(), "\n  "))
	if in.Service == nil && !opts.noService {
		fmt.Fprintln(g.stdout, "  (no service: this host runs neither systemd nor launchd; a hook reaps at each session's start, and 'reaper run -- CLIENT' when the client exits)")
	}
	// Every step tried first, as a dry run: all of it or none.
	if err := in.Check(cmd.Context()); err != nil {
		if !opts.dryRun {
			fmt.Fprintln(g.stdout, "\nNothing changed: a step cannot be done as planned.")
		}
		return err
	}
	if opts.dryRun {
		return nil
	}
	if !opts.yes {
		if f, ok := g.stdin.(*os.File); !ok || !audit.IsTerminal(f) {
			return usagef("init asks before it changes anything: answer on a terminal, or pass --yes")
		}
		yes, err := confirm(cmd.Context(), g.stdin, g.stdout, "\nProceed? [y/N] ")
		if !yes {
			fmt.Fprintln(g.stdout, "Nothing changed.")
			return err
		}
	}
	if err := in.Apply(cmd.Context()); err != nil {
		if undo := in.Undo(); len(undo) > 0 {
			fmt.Fprintf(g.stdout, "\nStopped part way. To undo what was done:\n  %s\n", strings.Join(undo, "\n  "))
		}
		return err
	}
	fmt.Fprintf(g.stdout, "\n%s\n", in.RunsFrom())
	if undo := in.Undo(); len(undo) > 0 {
		fmt.Fprintf(g.stdout, "To undo:\n  %s\n", strings.Join(undo, "\n  "))
	}
	return nil
}

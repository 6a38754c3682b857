package main

import (
	"fmt"
	"io/fs"

	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/packaging"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/policy"
)

func newPolicyCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check or show policy files",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPolicyCheckCommand(g), newPolicyShowCommand(g))
	return cmd
}

func newPolicyCheckCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "check FILE",
		Short:   "Validate a policy file; exit 0 if valid, 78 if not",
		Example: "  reaper policy check " + paths.SystemPolicy,
		Args:    oneArg("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPolicyCheck(args[0], g)
		},
	}
	return g.help.Set(cmd, func() string { return docs.Help("policy-check") })
}

func runPolicyCheck(path string, g *globalOptions) error {
	load := func() (*policy.Policy, error) { return policy.Load(path, run.PolicyClients(clients)) }
	if path == run.PolicyFromEnv {
		load = func() (*policy.Policy, error) { return run.LoadPolicy(path, clients) }
	}
	p, err := load()
	if err != nil {
		return err
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(g.stderr, "warning: %s\n", w)
	}
	acting := 0
	for _, r := range p.Rules {
		if r.Action != policy.Report {
			acting++
		}
	}
	if g.quiet {
		return nil // -q: valid says its exit status alone; errors and warnings still print
	}
	owners := audit.Plural(len(p.Owners), "owner")
	if len(p.Clients) > 0 {
		owners += ", " + audit.Plural(len(p.Clients), "declared client")
	}
	if len(p.Apps) > 0 {
		owners += ", " + audit.Plural(len(p.Apps), "MSIX app")
	}
	warned := ""
	if n := len(p.Warnings); n > 0 {
		warned = " (read the " + map[bool]string{true: "warning", false: "warnings"}[n == 1] + " above)"
	}
	fmt.Fprintf(g.stdout, "%s: valid%s: %s, %s, %s (%d that signal), %s\n", path, warned, owners,
		audit.Plural(len(p.Subreapers), "subreaper"), audit.Plural(len(p.Rules), "rule"), acting, audit.Plural(len(p.Protect), "protect entry"))
	return nil
}

func newPolicyShowCommand(g *globalOptions) *cobra.Command {
	var example bool
	cmd := &cobra.Command{
		Use:     "show [--example]",
		Short:   "Print the embedded default policy, or the shipped example",
		Example: "  reaper policy show --example > ~/.config/reaper/policy.toml",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text := policy.DefaultText()
			if example {
				b, err := fs.ReadFile(packaging.Files, "policy.example.toml")
				if err != nil {
					return err
				}
				text = string(b)
			}
			_, err := fmt.Fprint(g.stdout, text)
			return err
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("policy-show") })
	cmd.Flags().BoolVar(&example, "example", false, "print the shipped example policy")
	return cmd
}

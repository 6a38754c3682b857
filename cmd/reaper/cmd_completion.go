package main

import (
	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
)

func newCompletionCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:       "completion bash|zsh|fish",
		Short:     "Print a shell completion script",
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s needs one shell: bash, zsh or fish (got %d)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(g.stdout, true)
			case "zsh":
				return root.GenZshCompletion(g.stdout)
			case "fish":
				return root.GenFishCompletion(g.stdout, true)
			}
			return usagef("completion: unknown shell %q: want bash, zsh or fish", args[0])
		},
	}
	return g.help.Set(cmd, func() string { return docs.Help("completion") })
}

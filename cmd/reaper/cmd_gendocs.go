//go:build docs

package main

import (
	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/docs"
)

func init() { extraCommands = append(extraCommands, newGenDocsCommand) }

// newGenDocsCommand writes the man pages and shell completions from the
// command tree itself (docs.WriteMan, docs.WriteCompletions). Hidden: it
// is for packaging (make docs), not for operators.
func newGenDocsCommand(g *globalOptions) *cobra.Command {
	var manDir, compDir string
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write man pages and shell completions (for packaging)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.help.FillTree(cmd.Root())
			if manDir != "" {
				if err := docs.WriteMan(cmd.Root(), manDir, versionString()); err != nil {
					return err
				}
			}
			if compDir != "" {
				return docs.WriteCompletions(cmd.Root(), compDir)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&manDir, "man", "", "write man pages to `DIR`")
	cmd.Flags().StringVar(&compDir, "completions", "", "write bash, zsh and fish completions to `DIR`")
	return cmd
}

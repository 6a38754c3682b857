//go:build docs

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func init() { extraCommands = append(extraCommands, newGenDocsCommand) }

// newGenDocsCommand writes the man pages and shell completions from the
// command tree itself, so they can't drift from --help. Hidden: it is for
// packaging (make docs), not for operators.
func newGenDocsCommand(g *globalOptions) *cobra.Command {
	var manDir, compDir string
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write man pages and shell completions (for packaging)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			if manDir != "" {
				if err := os.MkdirAll(manDir, 0o755); err != nil {
					return err
				}
				// No Title: each page takes its command's (REAPER-SCAN…).
				header := &doc.GenManHeader{Section: "1", Source: "reaper " + versionString(),
					Manual: "reaper manual"}
				if err := doc.GenManTree(root, header, manDir); err != nil {
					return fmt.Errorf("man pages: %w", err)
				}
			}
			if compDir != "" {
				if err := os.MkdirAll(compDir, 0o755); err != nil {
					return err
				}
				for name, gen := range map[string]func(string) error{
					"reaper.bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
					"_reaper":     root.GenZshCompletionFile,
					"reaper.fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
				} {
					if err := gen(filepath.Join(compDir, name)); err != nil {
						return fmt.Errorf("completion %s: %w", name, err)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&manDir, "man", "", "write man pages to `DIR`")
	cmd.Flags().StringVar(&compDir, "completions", "", "write bash, zsh and fish completions to `DIR`")
	return cmd
}

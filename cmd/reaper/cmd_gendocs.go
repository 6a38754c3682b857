//go:build docs

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/orphanreaper/reaper/packaging"
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
				header := &doc.GenManHeader{Section: "1", Source: packaging.ManSource(versionString()),
					Manual: "reaper manual"}
				// Reproducible pages: the date of the commit, as the build
				// gives it (reproducible-builds.org's SOURCE_DATE_EPOCH).
				if sec, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
					date := time.Unix(sec, 0).UTC()
					header.Date = &date
				}
				manDefaults(root)
				if err := doc.GenManTree(root, header, manDir); err != nil {
					return fmt.Errorf("man pages: %w", err)
				}
				if err := packaging.AddManFiles(filepath.Join(manDir, "reaper.1")); err != nil {
					return fmt.Errorf("man pages: %w", err)
				}
				pages, _ := filepath.Glob(filepath.Join(manDir, "*.1"))
				for _, page := range pages {
					if err := packaging.TidyManPage(page); err != nil {
						return fmt.Errorf("man pages: %w", err)
					}
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

// manDefaults gives the man pages the defaults --help gives. A flag whose
// default depends on the run (--timeout: scan's or reap's; --lock-file:
// root's or the user's) has a zero value that its usage explains;
// cobra's pages would show that zero ("--timeout=0s") as the default.
// Such a flag's page shows its value's name instead ("--timeout=duration").
func manDefaults(cmd *cobra.Command) {
	fix := func(f *pflag.Flag) {
		if strings.Contains(f.Usage, "(default") && (f.DefValue == "" || f.DefValue == "0s" || f.DefValue == "0") {
			name, _ := pflag.UnquoteUsage(f)
			f.DefValue = name
		}
	}
	cmd.LocalFlags().VisitAll(fix)
	cmd.PersistentFlags().VisitAll(fix)
	for _, c := range cmd.Commands() {
		manDefaults(c)
	}
}

//go:build docs

package docs

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

// WriteMan writes the man pages of the command tree at root into dir,
// version the release's: made from the tree itself, so that they cannot
// drift from --help.
func WriteMan(root *cobra.Command, dir, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// No Title: each page takes its command's (REAPER-SCAN…).
	header := &doc.GenManHeader{Section: "1", Source: packaging.ManSource(version), Manual: "reaper manual"}
	// Reproducible pages: the date of the commit, as the build gives it
	// (reproducible-builds.org's SOURCE_DATE_EPOCH).
	if sec, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		date := time.Unix(sec, 0).UTC()
		header.Date = &date
	}
	manDefaults(root)
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	if err := packaging.AddManFiles(filepath.Join(dir, "reaper.1")); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	for _, page := range pages {
		if err := packaging.TidyManPage(page); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
	}
	return nil
}

// WriteCompletions writes the bash, zsh and fish completions of the
// command tree at root into dir.
func WriteCompletions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, gen := range map[string]func(string) error{
		"reaper.bash": func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		"_reaper":     root.GenZshCompletionFile,
		"reaper.fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
	} {
		if err := gen(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("completion %s: %w", name, err)
		}
	}
	return nil
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

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
				header := &doc.GenManHeader{Section: "1", Source: manSource(versionString()),
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
				if err := addFiles(filepath.Join(manDir, "reaper.1")); err != nil {
					return fmt.Errorf("man pages: %w", err)
				}
				pages, _ := filepath.Glob(filepath.Join(manDir, "*.1"))
				for _, page := range pages {
					if err := tidyPage(page); err != nil {
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

// files is the FILES section of reaper(1): what reaper reads and writes,
// where the packages put it.
const files = `.SH FILES
.TP
\fB/etc/reaper/policy.toml\fP
The policy of a reaper run as root; a user's reaper reads
\fB$XDG_CONFIG_HOME/reaper/policy.toml\fP (\fB~/.config/reaper/policy.toml\fP).
Without one, the embedded default, which only reports. See \fBreaper.toml\fP(5).
.TP
\fB/run/reaper.lock\fP, \fB/run/reaper.seen\fP
One reaper at a time (root's; a user's are in \fB$XDG_RUNTIME_DIR\fP), and the
report-only findings a timer's reap has already recorded.
.TP
\fB/var/log/reaper/audit.jsonl\fP
The audit log the packaged unit writes (\fB--audit-log\fP), one JSON line per
decision and signal, rotated by \fB/etc/logrotate.d/reaper\fP; \fBreaper history\fP reads it.
.TP
\fB/var/lib/prometheus/node-exporter/reaper.prom\fP
The metrics the packaged unit writes (\fB--metrics\fP) for node_exporter's textfile collector.
.TP
\fB/usr/lib/systemd/system/reaper.service\fP, \fBreaper.timer\fP
The packaged units: \fBreap --quiet\fP every minute; the user units are in
\fB/usr/lib/systemd/user/\fP.
.TP
\fB/usr/share/doc/reaper/\fP
The example policy, the report's JSON Schema, the ledger format, the
gateway hook, the Prometheus alerts and the Grafana dashboard.
`

// addFiles puts the FILES section into the man page at path, before SEE
// ALSO.
func addFiles(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	page := string(b)
	at := strings.Index(page, ".SH SEE ALSO")
	if at < 0 {
		at = len(page)
	}
	return os.WriteFile(path, []byte(page[:at]+files+"\n\n"+page[at:]), 0o644)
}

// tidyPage makes a cobra page read as a man page: a switch shows no
// "[=false]" (cobra prints a boolean's default as an optional value), the
// help's typography is groff's own, and
// the command's "Exit status:" paragraph moves out of DESCRIPTION into an
// EXIT STATUS section of its own, before OPTIONS.
func tidyPage(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	page := strings.ReplaceAll(string(b), "\\fP[=false]", "\\fP")
	// groff reads its input as Latin-1 unless told: the help's few
	// non-ASCII characters as its own escapes.
	page = strings.NewReplacer("—", "\\(em", "–", "\\(en", "→", "\\(->", "…", "...", "×", "\\(mu", "·", "\\(pc",
		"‘", "\\(oq", "’", "\\(cq", "“", "\\(lq", "”", "\\(rq", "≤", "\\(<=", "≥", "\\(>=").Replace(page)
	if at := strings.Index(page, "\nExit status:"); at >= 0 {
		end := strings.Index(page[at+1:], "\n\n")
		next := strings.Index(page[at+1:], "\n.")
		if end < 0 || next >= 0 && next < end {
			end = next
		}
		if end >= 0 {
			para := strings.TrimPrefix(page[at+1:at+1+end], "Exit status: ")
			page = page[:at+1] + page[at+1+end:]
			section := ".SH EXIT STATUS\n.PP\n" + para + "\n\n"
			if opt := strings.Index(page, ".SH OPTIONS"); opt >= 0 {
				page = page[:opt] + section + page[opt:]
			} else if see := strings.Index(page, ".SH SEE ALSO"); see >= 0 {
				page = page[:see] + section + page[see:]
			}
		}
	}
	return os.WriteFile(path, []byte(page), 0o644)
}

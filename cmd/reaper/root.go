package main

import (
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
)

// globalOptions are shared by every command.
type globalOptions struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	quiet  bool

	color     string // --color: auto, always or never
	noHeaders bool   // --no-headers

	// reaped, for the watch reaper run runs inside its own process, is
	// told of each adopted child the init reaped.
	reaped <-chan struct{}

	// help makes each command's long help when it is shown.
	help docs.Lazy
}

func newGlobalOptions() *globalOptions {
	return &globalOptions{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
}

// newBareRoot is the root command with its global flags and no
// subcommand: newRootCommand adds them all, reaper run's watch inside
// the one it runs.
func newBareRoot(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "reaper",
		Short:             "Find and remove the process trees AI-agent gateways leave behind",
		SilenceUsage:      true,
		SilenceErrors:     true,
		Args:              noArgs,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(colorWhens, g.color) {
				return usagef("--color %q: want auto, always or never", g.color)
			}
			level := slog.LevelInfo
			if g.quiet {
				level = slog.LevelError
			}
			g.log = audit.NewLogger(g.stderr, strings.TrimPrefix(cmd.CommandPath(), "reaper "), level)
			return nil
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("reaper") })
	// Every command's help: its long text made first (children take the
	// root's help function).
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		g.help.Fill(c)
		defaultHelp(c, args)
	})
	cmd.DisableAutoGenTag = true // reproducible man pages: no date stamp
	// --version: the first line of 'reaper version', made only when asked
	// for (the build info read and the kernel asked about pidfds are not
	// every start's work); a Version cobra sees makes the flag.
	cmd.Version = "-"
	cobra.AddTemplateFunc("reaperVersion", versionString)
	cmd.SetVersionTemplate("reaper {{reaperVersion}}\n")
	cmd.SetOut(g.stdout)
	cmd.SetErr(g.stderr)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	cmd.PersistentFlags().BoolVarP(&g.quiet, "quiet", "q", false, "print only what was asked for and every failure: what a reap acted on, refused or failed; a dry run's plan; doctor's checks that are not ok; nothing for a valid policy (JSON is unchanged)")
	cmd.PersistentFlags().StringVar(&g.color, "color", "auto", "colour a table's outcomes and statuses: `WHEN` — auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always, never")
	cmd.PersistentFlags().BoolVar(&g.noHeaders, "no-headers", false, "leave out a table's title line, column headings and sums: its rows only, for grep and awk — scan and reap give one tab-separated row per finding: rule, kind, action, outcome, root pid, user, RSS bytes, command (JSON is unchanged)")
	cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions(colorWhens, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// defaultHelp is cobra's own help function: what a command with no
// parent and none set gives.
var defaultHelp = (&cobra.Command{}).HelpFunc()

func newRootCommand(g *globalOptions) *cobra.Command {
	cmd := newBareRoot(g)
	cmd.AddCommand(
		newScanCommand(g),
		newReapCommand(g),
		newInitCommand(g),
		newWatchCommand(g),
		newRunCommand(g),
		newServiceCommand(g),
		newHookCommand(g),
		newPolicyCommand(g),
		newLedgerCommand(g),
		newPsCommand(g),
		newTopCommand(g),
		newEvidenceCommand(g),
		newPtyCommand(g),
		newHistoryCommand(g),
		newExplainCommand(g),
		newDoctorCommand(g),
		newVersionCommand(g),
		newCompletionCommand(g),
	)
	for _, extra := range extraCommands {
		cmd.AddCommand(extra(g))
	}
	completeOutput(cmd)
	return cmd
}

// completeOutput makes shell completion offer the formats for every
// command's --output, instead of file names.
func completeOutput(cmd *cobra.Command) {
	if cmd.Flags().Lookup("output") != nil {
		cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	}
	for _, c := range cmd.Commands() {
		completeOutput(c)
	}
}

// extraCommands are built into some binaries only: gen-docs, with the
// docs build tag (make docs), keeps cobra/doc and its markdown and YAML
// packages — a third of start-up's package initialisation — out of the
// reaper that runs from a timer.
var extraCommands []func(*globalOptions) *cobra.Command

// noArgs rejects positional arguments as a usage error (exit 2); it also
// catches unknown subcommands.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command or argument %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}

// oneArg wants exactly one positional argument, named name in the error.
func oneArg(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s needs one %s (got %d)", cmd.CommandPath(), name, len(args))
		}
		return nil
	}
}

// someArgs wants at least one positional argument, named name.
func someArgs(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s needs at least one %s (got 0)", cmd.CommandPath(), name)
		}
		return nil
	}
}

package main

import (
	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/docs"
	"github.com/orphanreaper/reaper/run"
)

// version and commit are set at build time with -ldflags "-X
// main.version=… -X main.commit=…" (make build, the release); a build
// without them takes both from what the Go toolchain stamped.
var version, commit = "", ""

func newVersionCommand(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  reaper version\n  reaper version -o json | jq -r .commit",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(&output); err != nil {
				return err
			}
			return g.write(buildInfo(), output)
		},
	}
	g.help.Set(cmd, func() string { return docs.Help("version") })
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return cmd
}

// buildInfo is this binary's version (audit.BuildVersion).
func buildInfo() audit.Version {
	pidfd, pidfs := run.PidfdSupported()
	return audit.BuildVersion(version, commit, pidfd, pidfs)
}

// versionString is the version alone (the root command's --version).
func versionString() string { return buildInfo().Version }

package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/run"
)

// version and commit are set at build time with -ldflags "-X
// main.version=… -X main.commit=…" (make build, the release); a build
// without them takes both from what the Go toolchain stamped.
var version, commit = "", ""

func newVersionCommand(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Long: `version prints reaper's version — the release's, else the commit it was
built from as the Go toolchain stamped it (go build in a git checkout;
'go install …@vX.Y.Z' stamps the version) — its platform and Go, and
whether signals go through pidfds here.`,
		Example: "  reaper version\n  reaper version -o json | jq -r .commit",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(&output); err != nil {
				return err
			}
			return g.write(buildInfo(), output)
		},
	}
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

// manSource is the pages' left footer, "reaper VERSION", kept short: man
// centres the date on an 80-column line, and a snapshot's version
// (0.0.0~git20261126110605.214.4d8f513, 36 characters) would run into it. A
// snapshot keeps its commit; the date beside it says when.
func manSource(v string) string {
	if i := strings.Index(v, "~git"); i >= 0 {
		// 0.0.0~gitTIME.N.HASH[.dirty]: the hash, and .dirty if there.
		if f := strings.Split(v[i+len("~git"):], "."); len(f) >= 3 {
			v = strings.Join(f[2:], ".") + " (snapshot)"
		}
	}
	const most = len("reaper ") + 24
	if s := "reaper " + v; len(s) <= most {
		return s
	}
	return "reaper " + v[:most-len("reaper ")-3] + "..."
}

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/platform/kill"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

func newVersionCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pidfd, pidfs := kill.PidfdSupported()
			_, err := fmt.Fprintf(g.stdout, "reaper %s %s/%s %s\nsignals through pidfd: %s; pidfs inodes: %s\n",
				versionString(), runtime.GOOS, runtime.GOARCH, runtime.Version(), yesNo(pidfd), yesNo(pidfs))
			return err
		},
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no (identity re-checked before each kill; min_age guards the rest)"
}

// versionString is the -X version, else the module version or VCS revision
// the Go toolchain stamped into the binary.
func versionString() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "devel-" + rev + dirty
}

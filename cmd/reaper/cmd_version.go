package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform/kill"
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

// versionInfo is what `reaper version` prints.
type versionInfo struct {
	Version string `json:"version"`
	// Commit and CommitTime are the VCS revision the toolchain stamped
	// ("" when it stamped none); Modified says the tree had changes.
	Commit     string `json:"commit"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Go         string `json:"go"`
	Pidfd      bool   `json:"pidfd"`
	Pidfs      bool   `json:"pidfs"`
}

// WriteTable implements audit.Tabular.
func (v versionInfo) WriteTable(w io.Writer, _ audit.Style) error {
	commit := "no commit stamped (built outside a git checkout, or with -buildvcs=false: 'make build' stamps it)"
	if v.Commit != "" {
		commit = "commit " + v.Commit
		if v.Modified {
			commit += " with uncommitted changes"
		}
		if v.CommitTime != "" {
			commit += ", " + v.CommitTime
		}
	}
	_, err := fmt.Fprintf(w, "reaper %s %s/%s %s\n%s\nsignals through pidfd: %s; pidfs inodes: %s\n",
		v.Version, v.OS, v.Arch, v.Go, commit, yesNo(v.Pidfd), yesNo(v.Pidfs))
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no (identity re-checked before each kill; min_age guards the rest)"
}

// buildInfo is this binary's version: the -X version, else the module
// version or VCS revision the Go toolchain stamped into it.
func buildInfo() versionInfo {
	v := versionInfo{Version: version, Commit: commit, OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	v.Pidfd, v.Pidfs = kill.PidfdSupported()
	info, ok := debug.ReadBuildInfo()
	var rev, at string
	var modified bool
	if ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v.Commit == "" || v.Commit == rev {
		v.Commit, v.CommitTime, v.Modified = rev, at, modified
	}
	switch {
	case v.Version != "":
	case ok && info.Main.Version != "" && info.Main.Version != "(devel)":
		v.Version = info.Main.Version
	case v.Commit != "":
		v.Version = "devel-" + v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			v.Version += "-dirty"
		}
	default:
		v.Version = "(devel)"
	}
	return v
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

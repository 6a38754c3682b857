package audit

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Version is what `reaper version` prints.
type Version struct {
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

// WriteTable implements Tabular.
func (v Version) WriteTable(w io.Writer, _ Style) error {
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

// BuildVersion is this binary's version: version and commit as the build
// set them (-X), else the module version or VCS revision the Go toolchain
// stamped into it; pidfd and pidfs are what the kernel gives.
func BuildVersion(version, commit string, pidfd, pidfs bool) Version {
	v := Version{Version: version, Commit: commit, OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(), Pidfd: pidfd, Pidfs: pidfs}
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

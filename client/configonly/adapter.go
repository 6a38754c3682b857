package configonly

import (
	"os"
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Adapter is a config-only client, as a value.
type Adapter struct {
	// About are the client's facts (client.Info); Homes, when empty, is
	// Home's.
	About client.Info
	// Home is where the client keeps its dir in a home (".gemini",
	// ".config/kilo").
	Home string
	// Own lists the dirs reaper's own environment names (nil: none).
	Own func(getenv func(string) string) []string
	// Named is the dir a process's environment names, and the variable
	// it came from (nil: no variable names it).
	Named func(env func(string) (string, bool)) (dir, from string)
	// Files are the config files of a dir: one of them there makes a dir
	// the client's (an operator's --ledger DIR), where its base is Home's
	// too when Base is set.
	Files []string
	Base  bool
	// ReadDir reads a dir's config, as the dir's owner.
	ReadDir func(dir string) *statedir.Config
}

var _ client.Adapter[statedir.Config] = Adapter{}

// Info is About, its Homes derived from Home.
func (a Adapter) Info() client.Info {
	info := a.About
	if len(info.Homes) == 0 {
		info.Homes = []string{"~/" + filepath.ToSlash(a.Home)}
	}
	return info
}

// HomeDirs lists the home's dir when it is the account's.
func (a Adapter) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, a.Home, uid) }

// OwnDirs lists what Own names.
func (a Adapter) OwnDirs(getenv func(string) string) []string {
	if a.Own == nil {
		return nil
	}
	return a.Own(getenv)
}

// NamedDir is what Named names.
func (a Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	if a.Named == nil {
		return "", ""
	}
	return a.Named(env)
}

// IsStateDir reports whether dir holds one of Files (and, with Base, is
// named as Home is).
func (a Adapter) IsStateDir(dir string) bool {
	if a.Base && filepath.Base(dir) != filepath.Base(a.Home) {
		return false
	}
	for _, n := range a.Files {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// Read reads the dir's config, as the dir's owner.
func (a Adapter) Read(dir string) *statedir.Config { return a.ReadDir(dir) }

// Judge: the config's servers, spoken by uid.
func (Adapter) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

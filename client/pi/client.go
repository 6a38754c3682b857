package pi

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner pi's marks attribute findings to.
const OwnerName = "pi"

// The variables pi sets: EnvAgent on itself at start (its children carry
// it), EnvDir to move its agent dir.
const (
	EnvAgent = "PI_CODING_AGENT"
	EnvDir   = "PI_CODING_AGENT_DIR"
)

// files are what make a dir pi's agent dir (an operator's --ledger DIR).
var files = []string{"settings.json", "models.json", "auth.json", "sessions"}

// Adapter is pi's adapter, a config-only client with nothing to read: pi
// keeps no pid and no servers on disk, its marks do the work. Client is it
// on the client seam (client/all lists it).
var Adapter = configonly.Adapter{
	About: client.Info{Name: OwnerName, Title: "pi", EnvNames: []string{EnvAgent, EnvDir},
		Owners: []string{OwnerName}, Marks: marks, Comms: []string{"pi"}},
	Home: filepath.Join(".pi", "agent"),
	// PI_CODING_AGENT_DIR.
	Own: func(getenv func(string) string) []string { return []string{getenv(EnvDir)} },
	// A process's PI_CODING_AGENT_DIR.
	Named: func(env func(string) (string, bool)) (string, string) {
		dir, _ := env(EnvDir)
		return dir, EnvDir
	},
	Files:   files,
	ReadDir: read,
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

// read reads the dir's head alone: what pi writes there names no process.
func read(dir string) *statedir.Config {
	head, sd, ok := statedir.Start(dir)
	raw := &statedir.Config{Head: head}
	if ok {
		raw.Finish(sd)
	}
	return raw
}

// marks: the tool's shell and what it runs are exec, pi's by
// PI_CODING_AGENT=true, and gone with pi when no pi that could have
// spawned them is alive.
var marks = scan.Marks{
	Env:      []scan.EnvMark{{Env: EnvAgent, Value: "true", Kind: ledger.KindExec}},
	Spawners: []scan.SpawnerMark{{Env: EnvAgent, Value: "true", Owner: OwnerName}},
}

package continuecli

import (
	"path/filepath"
	"strings"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner cn's findings are attributed to.
const OwnerName = "continue-cli"

// EnvDir moves Continue's global dir (~/.continue).
const EnvDir = "CONTINUE_GLOBAL_DIR"

// configFile is the config cn reads its MCP servers from.
const configFile = "config.yaml"

// script is cn as node runs it: the npm bin (`…/cn`) or the package's own
// entry point.
var script = scan.MustPattern(`/@continuedev/cli/|(^|/)cn( |$)`)

// Adapter is cn's adapter, a config-only client; Client is it on the
// client seam (client/all lists it).
var Adapter = adapter{configonly.Adapter{
	About: client.Info{Name: OwnerName, Title: "Continue CLI (cn)", EnvNames: append([]string{EnvDir}, statedir.HomeVars...),
		RemoteServer: "`mcpServers: [{name: NAME, type: streamable-http, url: URL}]` in ~/.continue/config.yaml",
		Owners:       []string{OwnerName}, Marks: marks, Script: script},
	Home: ".continue",
	// CONTINUE_GLOBAL_DIR.
	Own: func(getenv func(string) string) []string { return []string{getenv(EnvDir)} },
	// A process's CONTINUE_GLOBAL_DIR, else its HOME's .continue: cn
	// passes its environment to its servers, and a server's home is cn's.
	Named: func(env func(string) (string, bool)) (string, string) {
		if dir, ok := env(EnvDir); ok && strings.TrimSpace(dir) != "" {
			return strings.TrimSpace(dir), EnvDir
		}
		if home, ok := statedir.ProcessHome(env); ok {
			return filepath.Join(home, ".continue"), client.FromHome
		}
		return "", ""
	},
	Files: []string{configFile},
	ReadDir: func(dir string) *statedir.Config {
		return statedir.ReadYAMLServers(dir, configFile, "mcpServers", "a Continue config")
	},
}}

// adapter is the config-only adapter whose servers cn runs in its own
// process group (scan.Server.GroupOwner).
type adapter struct{ configonly.Adapter }

var _ client.Adapter[statedir.Config] = adapter{}

// Judge: the config's servers, spoken by uid, each cn's by its group.
func (a adapter) Judge(c *statedir.Config, uid uint32, snap *platform.Snapshot) (scan.Evidence, []error, []string) {
	ev, problems, warnings := a.Adapter.Judge(c, uid, snap)
	for i := range ev.Servers {
		ev.Servers[i].GroupOwner = OwnerName
	}
	return ev, problems, warnings
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

// marks: cn itself is acp (an agent CLI, headless once what launched it is
// gone).
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: scan.MustPattern(`(^|/)node (.*/)?(cn|@continuedev/cli/dist/cn\.js)( |$)`), Kind: ledger.KindACP, Owner: OwnerName}},
}

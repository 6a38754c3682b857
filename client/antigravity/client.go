package antigravity

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/configonly"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner Antigravity's findings are attributed to.
const OwnerName = "antigravity"

// configFile is where Antigravity keeps its MCP servers, in its dir.
const configFile = "mcp_config.json"

// Adapter is Antigravity's adapter, a config-only client; Client is it on
// the client seam (client/all lists it).
var Adapter = configonly.Adapter{
	About: client.Info{Name: OwnerName, Title: "Antigravity", RemoteServer: "`\"NAME\": {\"serverUrl\": \"URL\"}` in ~/.gemini/antigravity/mcp_config.json",
		Owners: []string{OwnerName}, Marks: scan.Marks{}, Comms: []string{"antigravity", "agy"}},
	Home:  filepath.Join(".gemini", "antigravity"),
	Files: []string{configFile},
	ReadDir: func(dir string) *statedir.Config {
		return statedir.ReadServers(dir, configFile, "mcpServers", "an Antigravity MCP config")
	},
}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[statedir.Config](Adapter)

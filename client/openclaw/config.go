package openclaw

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// MCPServer is a stdio MCP server an OpenClaw config names under
// mcp.servers: OpenClaw's bundle-MCP runtime spawns command with args
// (src/agents/mcp-stdio-transport.ts, shell: false) and scrubs the
// environment, so these servers carry no OpenClaw marker; their command
// line is what identifies them.
type MCPServer struct {
	scan.Server
	// IdleTTLMs is the config's mcp.sessionIdleTtlMs: how long a session's
	// MCP servers may idle before the gateway retires them; 0 (the
	// default) keeps them for the session's whole life.
	IdleTTLMs int64
}

// ReadMCPServers reads the stdio MCP servers of the OpenClaw state
// dir's config, <dir>/openclaw.json (JSON5). A missing file is no servers;
// an unreadable or malformed one is an error with FILE:LINE where a line is
// known. Servers without a command (HTTP transports) are skipped.
func ReadMCPServers(dir string) ([]MCPServer, error) {
	file := filepath.Join(dir, "openclaw.json")
	sd, err := statedir.Open(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	b, err := sd.Read("openclaw.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, ledger.ReadError(file, err)
	}
	servers, err := parseMCPServers(file, b)
	for i := range servers {
		servers[i].UID = uint32(sd.Owner)
	}
	return servers, err
}

func parseMCPServers(file string, b []byte) ([]MCPServer, error) {
	doc, err := statedir.ParseJSON5(b)
	if err != nil {
		var e *ledger.Error
		if errors.As(err, &e) {
			e.File = file
			return nil, e
		}
		return nil, &ledger.Error{File: file, Msg: err.Error()}
	}
	var cfg struct {
		MCP struct {
			Servers   map[string]json.RawMessage `json:"servers"`
			IdleTTLMs float64                    `json:"sessionIdleTtlMs"`
		} `json:"mcp"`
	}
	if line, err := doc.Unmarshal(&cfg); err != nil {
		return nil, &ledger.Error{File: file, Line: line, Msg: "not an OpenClaw config: " + statedir.JSONProblem(err)}
	}
	names := make([]string, 0, len(cfg.MCP.Servers))
	for name := range cfg.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var servers []MCPServer
	for _, name := range names {
		var s struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if err := json.Unmarshal(cfg.MCP.Servers[name], &s); err != nil {
			return nil, &ledger.Error{File: file, Msg: fmt.Sprintf("mcp.servers.%s: want {command: string, args: [string]}", statedir.KeyName(name))}
		}
		if strings.TrimSpace(s.Command) == "" {
			continue
		}
		servers = append(servers, MCPServer{Server: scan.Server{Name: name, Command: s.Command, Args: s.Args, File: file}, IdleTTLMs: int64(cfg.MCP.IdleTTLMs)})
	}
	return servers, nil
}

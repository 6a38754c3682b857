package statedir

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// maxServers bounds the MCP servers one config file declares that are
// read: a config is a user's to fill with anything.
const maxServers = 256

// StdioServers turns a config's map of MCP servers — {name: {command,
// args, type}}, the shape Claude Code's and Gemini CLI's configs share —
// into the stdio servers it declares, in name order: an entry with a type
// other than stdio (http, sse) runs no local process and is left out, as
// is one without a command. Entries that do not parse are named in bad,
// by where: what they declare only classifies, so they are warnings, not
// doubt.
func StdioServers(file, where string, m map[string]json.RawMessage) (out []scan.Server, bad []string) {
	names, bad := ServerNames(file+": "+where, m)
	for _, name := range names {
		var s struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if err := json.Unmarshal(m[name], &s); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %s.%s: want {command: string, args: [string]}", file, where, KeyName(name)))
			continue
		}
		// "stdio" (Claude Code, Gemini CLI, Qwen Code), "local" (Copilot
		// CLI), or none: a command reaper may meet as a process.
		if s.Type != "" && s.Type != "stdio" && s.Type != "local" || strings.TrimSpace(s.Command) == "" {
			continue
		}
		out = append(out, scan.Server{Name: name, Command: s.Command, Args: s.Args, File: file})
	}
	return out, bad
}

// ServerNames are the names of a config's map of MCP servers in name
// order, at most maxServers of them; where there were more, bad says so,
// naming where (FILE: KEY).
func ServerNames[V any](where string, m map[string]V) (names, bad []string) {
	names = make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) > maxServers {
		bad = []string{fmt.Sprintf("%s: %d MCP servers, only the first %d read", where, len(names), maxServers)}
		names = names[:maxServers]
	}
	return names, bad
}

// KeyName shows a config key in an error: as it is when it is a plain
// name, else quoted and cut to 64 bytes, so no control character or long
// run of a file's bytes reaches a log.
func KeyName(k string) string {
	plain := len(k) > 0 && len(k) <= 64
	for _, c := range k {
		plain = plain && (c == '-' || c == '_' || c == '.' || c == '@' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	}
	if plain {
		return k
	}
	return fmt.Sprintf("%.64q", k)
}

// ReadArgvServers reads the local MCP servers of each of files in dir that
// exists, in OpenCode's format ({mcp: {NAME: {type: "local", command:
// [argv]}}}), which its forks keep, as the dir's owner. what names the
// file in a problem ("an OpenCode config").
func ReadArgvServers(dir string, files []string, what string) *Config {
	head, sd, ok := Start(dir)
	raw := &Config{Head: head}
	if !ok {
		return raw
	}
	for _, name := range files {
		b := raw.ReadFile(sd, name)
		if b == nil {
			continue
		}
		srv, bad := parseArgv(filepath.Join(sd.Path, name), b, what)
		raw.Servers, raw.ConfigProblems = append(raw.Servers, srv...), append(raw.ConfigProblems, bad...)
	}
	raw.Finish(sd)
	return raw
}

// parseArgv reads a config's mcp entries of type local: each command is
// an argv, its first word the program.
func parseArgv(file string, b []byte, what string) (out []scan.Server, bad []string) {
	var cfg struct {
		MCP map[string]json.RawMessage `json:"mcp"`
	}
	if line, err := UnmarshalJSON5(b, &cfg); err != nil {
		return nil, []string{(&ledger.Error{File: file, Line: line, Msg: "not " + what + ": " + JSONProblem(err)}).Error()}
	}
	names, bad := ServerNames(file+": mcp", cfg.MCP)
	for _, n := range names {
		var s struct {
			Type    string   `json:"type"`
			Command []string `json:"command"`
		}
		if err := json.Unmarshal(cfg.MCP[n], &s); err != nil {
			bad = append(bad, fmt.Sprintf("%s: mcp.%s: want {type: \"local\", command: [string]}", file, KeyName(n)))
			continue
		}
		if s.Type != "local" || len(s.Command) == 0 || s.Command[0] == "" {
			continue
		}
		out = append(out, scan.Server{Name: n, Command: s.Command[0], Args: s.Command[1:], File: file})
	}
	return out, bad
}

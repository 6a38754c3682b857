package statedir

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/scan"
)

// ReadYAMLServers reads the stdio MCP servers of the YAML file name in
// dir, a list below key ({key: [{name, command, args}]}, Continue's
// config.yaml), as the dir's owner; title names the client's file in a
// problem ("a Continue config"). An entry with no command (a hub block it
// `uses`, a server by URL) is no process reaper meets: skipped. At most
// maxServers are read.
func ReadYAMLServers(dir, name, key, title string) *Config {
	head, sd, ok := Start(dir)
	raw := &Config{Head: head}
	if !ok {
		return raw
	}
	file := filepath.Join(sd.Path, name)
	if b := raw.ReadFile(sd, name); b != nil {
		raw.Servers, raw.ConfigProblems = yamlServers(file, key, title, b)
	}
	raw.Finish(sd)
	return raw
}

// yamlServers is the list below key in the YAML document b.
func yamlServers(file, key, title string, b []byte) ([]scan.Server, []string) {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, []string{yamlProblem(file, title, err)}
	}
	list, ok := doc[key]
	if !ok {
		return nil, nil
	}
	var entries []struct {
		Name    string   `yaml:"name"`
		Type    string   `yaml:"type"`
		Command string   `yaml:"command"`
		Args    []string `yaml:"args"`
	}
	if err := list.Decode(&entries); err != nil {
		return nil, []string{(&ledger.Error{File: file, Line: list.Line, Msg: fmt.Sprintf("%s: want a list of {name, command, args: [string]}", key)}).Error()}
	}
	var out []scan.Server
	var bad []string
	for k, e := range entries {
		if k == maxServers {
			bad = append(bad, fmt.Sprintf("%s: %s: %d MCP servers, only the first %d read", file, key, len(entries), maxServers))
			break
		}
		if e.Type != "" && e.Type != "stdio" || strings.TrimSpace(e.Command) == "" {
			continue
		}
		name := e.Name
		if name == "" {
			name = strconv.Itoa(k)
		}
		out = append(out, scan.Server{Name: name, Command: e.Command, Args: e.Args, File: file})
	}
	return out, bad
}

// yamlLine is where a YAML error says it is.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line ([0-9]+)`) })

// yamlProblem says the file is not title, at the line the error names:
// the error's own words may quote the file, which is the user's text.
func yamlProblem(file, title string, err error) string {
	line := 0
	if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return (&ledger.Error{File: file, Line: line, Msg: "not " + title + ": not YAML it can read"}).Error()
}

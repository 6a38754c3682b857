package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
)

// Claude Code's own MCP log. Claude writes, per working directory and
// server, <cache>/claude-cli-nodejs/<slug of cwd>/mcp-logs-<server>/<time>.jsonl,
// one JSON object a line: {debug, timestamp, sessionId, cwd}. Its
// "Starting connection" lines are the server's starts; "Sending SIGINT to
// MCP server process" and "MCP server process exited" are its replace and
// shutdown paths stopping one. A start with another after it and no stop
// between is a server claude replaced without stopping: an entry edited
// and reconnected (/mcp), which leaves the old process running under the
// live claude until it exits (2.1.331, measured here).

// What is read of the MCP logs, at most: per live session (maxTranscripts
// of them) maxLogServers server dirs, in each the newest logFiles files,
// of each the last logTail bytes, logBudget bytes in all, and the last
// maxEvents events a server.
const (
	maxLogServers = 64
	logFiles      = 2
	logTail       = 128 << 10
	logBudget     = 8 << 20
	maxEvents     = 64
	maxEntries    = 256
)

// SessionMCP is what a live session's MCP logs and config say: the
// servers its configs declare now (Entries), and each server's starts and
// stops in its log.
type SessionMCP struct {
	Session string      `json:"session"`
	Entries []NamedArgv `json:"entries,omitempty"`
	Logs    []ServerLog `json:"logs,omitempty"`
}

// NamedArgv is a configured stdio server: its name, command and args, and
// the file that declares it.
type NamedArgv struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	File    string   `json:"file"`
}

// ServerLog is one server's log, for one session: its events in order.
type ServerLog struct {
	Server string     `json:"server"`
	File   string     `json:"file"`
	Events []LogEvent `json:"events"`
}

// LogEvent is a start (Stop false) or a stop of the server, at At (ms).
type LogEvent struct {
	At   int64 `json:"at"`
	Stop bool  `json:"stop,omitempty"`
}

// cacheDirs are where Claude Code's cache may be for a config dir of
// owner's: beside the config dir's home (~/.claude's parent, or a
// CLAUDE_CONFIG_DIR's), and in the owner's home by the account database
// (env-paths: ~/.cache on Linux, ~/Library/Caches on macOS). A cache moved
// by XDG_CACHE_HOME is not found.
func cacheDirs(config string, owner int) []string {
	homes := []string{filepath.Dir(config)}
	if u, err := user.LookupId(strconv.Itoa(owner)); err == nil && u.HomeDir != "" && u.HomeDir != "/" {
		homes = append(homes, filepath.Clean(u.HomeDir))
	}
	var out []string
	for _, h := range homes {
		dir := filepath.Join(h, cacheRel())
		if uid, err := platform.DirOwner(dir); err == nil && uid == owner && !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out
}

// cacheRel is where in a home Claude Code keeps its cache (env-paths).
func cacheRel() string {
	if runtime.GOOS == "darwin" {
		return filepath.Join("Library", "Caches", "claude-cli-nodejs")
	}
	return filepath.Join(".cache", "claude-cli-nodejs")
}

// readMCPLogs reads, for each live session with a working directory, the
// servers its configs declare now and its MCP logs. Nothing here is doubt:
// what cannot be read proves no server superseded.
func (raw *Raw) readMCPLogs(sd statedir.Dir) {
	caches := cacheDirs(sd.Path, sd.Owner)
	budget := int64(logBudget)
	n := 0
	for _, s := range raw.Sessions {
		if s.Cwd == "" || !filepath.IsAbs(s.Cwd) || n == maxTranscripts {
			continue
		}
		var logs []ServerLog
		for _, cache := range caches {
			logs = append(logs, readServerLogs(cache, projectSlug(s.Cwd), s.SessionID, sd.Owner, &budget)...)
		}
		if len(logs) == 0 {
			continue
		}
		n++
		raw.MCP = append(raw.MCP, SessionMCP{Session: s.SessionID, Logs: logs, Entries: raw.entries(s.Cwd, sd.Owner)})
	}
}

// entries are the stdio servers a session in cwd has now: the global
// config's (mcpServers, and projects[cwd].mcpServers) and the project's
// .mcp.json, read as its owner's file.
func (raw *Raw) entries(cwd string, owner int) []NamedArgv {
	var out []NamedArgv
	add := func(file string, m map[string]json.RawMessage) {
		srv, _ := statedir.StdioServers(file, "mcpServers", m)
		for _, s := range srv {
			if len(out) < maxEntries {
				out = append(out, NamedArgv{Name: s.Name, Command: s.Command, Args: s.Args, File: s.File})
			}
		}
	}
	add(raw.global.file, raw.global.top)
	add(raw.global.file, raw.global.projects[cwd])
	if b, err := platform.ReadBeneath(cwd, ".mcp.json", 1<<20, owner); err == nil {
		var cfg struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(b, &cfg) == nil {
			add(filepath.Join(cwd, ".mcp.json"), cfg.MCPServers)
		}
	}
	return out
}

// readServerLogs reads the logs of each server of the project slug below
// cache, keeping session's events, within what is left of budget.
func readServerLogs(cache, slug, session string, owner int, budget *int64) []ServerLog {
	names := listDir(filepath.Join(cache, slug), 4*maxLogServers)
	var out []ServerLog
	for _, n := range names {
		if !strings.HasPrefix(n, "mcp-logs-") || len(out) == maxLogServers {
			continue
		}
		rel := filepath.Join(slug, n)
		var files []string
		for _, f := range listDir(filepath.Join(cache, rel), 1024) {
			if strings.HasSuffix(f, ".jsonl") {
				files = append(files, f)
			}
		}
		sort.Strings(files) // named by the time claude started: oldest first
		if len(files) > logFiles {
			files = files[len(files)-logFiles:]
		}
		l := ServerLog{Server: strings.TrimPrefix(n, "mcp-logs-")}
		for _, f := range files {
			ev := readLogEvents(cache, filepath.Join(rel, f), session, owner, budget)
			if len(ev) > 0 {
				l.File, l.Events = filepath.Join(cache, rel, f), append(l.Events, ev...)
			}
		}
		if len(l.Events) > maxEvents {
			l.Events = l.Events[len(l.Events)-maxEvents:]
		}
		if len(l.Events) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// eachTailLine calls each with every whole line of the last tail bytes of
// rel below dir, read as owner's through no link (the first line, cut by
// the seek, is not one). It returns the bytes it spans, or -1 when the
// file could not be read.
func eachTailLine(dir, rel string, owner int, tail int64, each func(line []byte)) int64 {
	f, err := platform.OpenBeneath(dir, rel, owner)
	if err != nil {
		return -1
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return -1
	}
	from := max(size-tail, 0)
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return -1
	}
	sc := bufio.NewScanner(io.LimitReader(f, tail))
	sc.Buffer(make([]byte, 0, 16<<10), int(tail))
	first := from > 0
	for sc.Scan() {
		if first {
			first = false // cut by the seek
			continue
		}
		each(sc.Bytes())
	}
	return size - from
}

// listDir lists at most n names in dir, sorted; nothing when it cannot be
// read.
func listDir(dir string, n int) []string {
	names, _ := platform.DirNames(dir, n)
	sort.Strings(names)
	return names
}

// readLogEvents reads the starts and stops of session in the last logTail
// bytes of one log file (fewer, when less of budget is left), and takes
// what it read from budget.
func readLogEvents(cache, rel, session string, owner int, budget *int64) []LogEvent {
	tail := min(int64(logTail), *budget)
	if tail <= 0 {
		return nil
	}
	// Only the last lines that may be events are parsed: the events kept
	// are the last maxEvents of a server's.
	var lines [][]byte
	read := eachTailLine(cache, rel, owner, tail, func(line []byte) {
		start := bytes.Contains(line, []byte(`"Starting connection`))
		stop := bytes.Contains(line, []byte(`"Sending SIGINT to MCP server process`)) || bytes.Contains(line, []byte(`"MCP server process exited`))
		if (start || stop) && bytes.Contains(line, []byte(session)) {
			if len(lines) == 2*maxEvents {
				lines = append(lines[:0], lines[1:]...)
			}
			lines = append(lines, bytes.Clone(line))
		}
	})
	if read < 0 {
		return nil
	}
	*budget -= read
	var out []LogEvent
	for _, line := range lines {
		var rec struct {
			Debug     string    `json:"debug"`
			Timestamp time.Time `json:"timestamp"`
			SessionID string    `json:"sessionId"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.SessionID != session {
			continue
		}
		switch {
		case strings.HasPrefix(rec.Debug, "Starting connection"):
			out = append(out, LogEvent{At: rec.Timestamp.UnixMilli()})
		case strings.HasPrefix(rec.Debug, "Sending SIGINT to MCP server process"), strings.HasPrefix(rec.Debug, "MCP server process exited"):
			out = append(out, LogEvent{At: rec.Timestamp.UnixMilli(), Stop: true})
		}
	}
	return out
}

package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// maxSessions bounds the session files read from one config dir: one per
// running claude, so more is a user filling the dir.
const maxSessions = 256

// sessionName is the name Claude Code gives a session file: its pid.
var sessionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]{0,9}\.json$`) })

// sessionPID is the pid a session file is named by.
func sessionPID(name string) int {
	pid, _ := strconv.Atoi(strings.TrimSuffix(name, ".json"))
	return pid
}

// Raw is what one config dir's files say, read and bounded but not judged:
// plain data that crosses the reader child's boundary as JSON.
type Raw struct {
	// Config is the dir, its owner, what could not be read, and the stdio
	// MCP servers the global config declares.
	statedir.Config
	// Sessions are the session files, by pid.
	Sessions []Session `json:"sessions,omitempty"`
	// Tools are the Bash tool calls of the sessions' transcripts (jobs.go).
	Tools []ToolCall `json:"tools,omitempty"`
	// MCP are the live sessions' MCP logs and servers (mcplog.go).
	MCP []SessionMCP `json:"mcp,omitempty"`
	// Daemon is the background-agent daemon's records (daemon.go).
	Daemon *Daemon `json:"daemon,omitempty"`

	// global is the global config's servers as read, for MCP's entries.
	global globalServers
}

// globalServers are the global config's MCP server maps: mcpServers and
// each project's.
type globalServers struct {
	file     string
	top      map[string]json.RawMessage
	projects map[string]map[string]json.RawMessage
}

// Session is one session file as Claude Code writes it.
type Session struct {
	File      string `json:"file"`
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	StartedAt int64  `json:"startedAt"` // ms since the epoch
	// ProcStart is the pid's start time as Claude Code read it: on Linux
	// field 22 of /proc/PID/stat, in clock ticks since boot; elsewhere
	// `ps -o lstart=` under LC_ALL=C TZ=UTC ("Mon Nov 24 08:00:00 2026",
	// to the second; both read from the 2.1.197 binary).
	ProcStart string `json:"procStart,omitempty"`
	Kind      string `json:"kind,omitempty"`
	// Cwd is the session's working directory: its transcript is in the
	// folder projects/ names after it.
	Cwd string `json:"cwd,omitempty"`
	// PIDDomain (2.1.330+) names the pid namespace the pid is of:
	// linux:<machine-id>:pid:[<inode>].
	PIDDomain string `json:"pidDomain,omitempty"`
	// Version is the claude that wrote the file (2.1.331).
	Version string `json:"version,omitempty"`
}

// check says why s is not a session file Claude Code writes, or "": its
// identifiers are tens of bytes (statedir.MaxID). Asked in the reader, so
// that its output stays small, and again by Judge, which trusts no reader.
func (s *Session) check() string {
	for _, f := range []struct{ name, v string }{{"sessionId", s.SessionID}, {"procStart", s.ProcStart}, {"kind", s.Kind}, {"pidDomain", s.PIDDomain}, {"version", s.Version}} {
		if why := statedir.CheckID(f.name, f.v); why != "" {
			return why
		}
	}
	return ""
}

// started is the session's start as the file says (startedAt, ms since
// the epoch), or zero for none or a value no clock of the last and next
// few decades would give.
func (s *Session) started() time.Time {
	t := time.UnixMilli(s.StartedAt)
	if s.StartedAt <= 0 || t.Year() < 2000 || t.Year() > 2100 {
		return time.Time{}
	}
	return t
}

// ReadRaw reads the config dir's session files and its global config's
// MCP servers, as the calling process may: as root that is the child
// running as the dir's owner.
func ReadRaw(dir string) *Raw { return readRaw(dir, nil, false) }

// readRaw is ReadRaw; with only, of the session files only those named
// (ReadChanged).
func readRaw(dir string, names []string, only bool) *Raw {
	head, sd, ok := statedir.Start(dir)
	raw := &Raw{Config: statedir.Config{Head: head}}
	if !ok {
		return raw
	}
	if only {
		raw.readSessionFiles(sd, changedSessions(names))
	} else {
		raw.readSessions(sd)
	}
	raw.readToolCalls(sd.Path, sd.Owner)
	raw.readConfig(sd)
	raw.readMCPLogs(sd)
	raw.readDaemon(sd)
	raw.Finish(sd)
	return raw
}

// readSessions reads <dir>/sessions/<pid>.json by need: the files of live
// pids first, then the others newest first, at most maxSessions
// (statedir.Choose). Claude Code leaves the file of a claude that was
// killed, so a home collects them; the stale ones past the bound are
// said, and only a live pid's file left unread is the owner's doubt.
func (raw *Raw) readSessions(sd statedir.Dir) {
	dir := filepath.Join(sd.Path, "sessions")
	chosen, err := statedir.Choose(dir, sessionName().MatchString, sessionPID, maxSessions)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		raw.ReadError(dir, err)
		return
	}
	if why := chosen.Doubt("session files", maxSessions); why != "" {
		raw.Problem(&ledger.Error{File: dir, Msg: why})
	}
	if why := chosen.Stale("session files", maxSessions); why != "" {
		raw.Skip(dir, why)
	}
	raw.readSessionFiles(sd, chosen.Names)
}

// readSessionFiles reads the session files named (their names in
// sessions/), in order: one gone meanwhile is passed over.
func (raw *Raw) readSessionFiles(sd statedir.Dir, files []string) {
	for _, n := range files {
		rel := filepath.Join("sessions", n)
		path := filepath.Join(sd.Path, rel)
		b, err := sd.Read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its claude ended while the dir was read
		}
		if err != nil {
			raw.ReadError(path, err)
			continue
		}
		var s Session
		if err := json.Unmarshal(b, &s); err != nil {
			raw.Problem(&ledger.Error{File: path, Line: statedir.JSONErrLine(b, err), Msg: "not a Claude Code session file: " + statedir.JSONProblem(err)})
			continue
		}
		if want, _ := strconv.Atoi(n[:len(n)-len(".json")]); s.PID != want || s.SessionID == "" {
			raw.Problem(&ledger.Error{File: path, Msg: fmt.Sprintf("not a Claude Code session file: want pid %d and a sessionId", want)})
			continue
		}
		if why := s.check(); why != "" {
			raw.Problem(&ledger.Error{File: path, Msg: "not a Claude Code session file: " + why})
			continue
		}
		s.File = path
		raw.Sessions = append(raw.Sessions, s)
	}
}

// readConfig reads the global config's stdio MCP servers: mcpServers and
// every project's. The config of ~/.claude is ~/.claude.json, beside it;
// of any other config dir (CLAUDE_CONFIG_DIR), <dir>/.claude.json.
func (raw *Raw) readConfig(sd statedir.Dir) {
	base, rel := sd.Path, ".claude.json"
	if filepath.Base(sd.Path) == ".claude" {
		base = filepath.Dir(sd.Path)
	}
	file := filepath.Join(base, rel)
	b := raw.ReadFile(statedir.Dir{Path: base, Owner: sd.Owner}, rel)
	if b == nil {
		return
	}
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		raw.ConfigProblems = append(raw.ConfigProblems, (&ledger.Error{File: file, Line: statedir.JSONErrLine(b, err), Msg: "not a Claude Code config: " + statedir.JSONProblem(err)}).Error())
		return
	}
	raw.global = globalServers{file: file, top: cfg.MCPServers, projects: map[string]map[string]json.RawMessage{}}
	for d, p := range cfg.Projects {
		raw.global.projects[d] = p.MCPServers
	}
	srv, bad := statedir.StdioServers(file, "mcpServers", cfg.MCPServers)
	raw.Servers, raw.ConfigProblems = append(raw.Servers, srv...), append(raw.ConfigProblems, bad...)
	dirs := make([]string, 0, len(cfg.Projects))
	for d := range cfg.Projects {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		srv, bad := statedir.StdioServers(file, "projects["+statedir.KeyName(d)+"].mcpServers", cfg.Projects[d].MCPServers)
		raw.Servers, raw.ConfigProblems = append(raw.Servers, srv...), append(raw.ConfigProblems, bad...)
		if len(raw.Servers) > 4*maxSessions {
			raw.ConfigProblems = append(raw.ConfigProblems, fmt.Sprintf("%s: more than %d MCP servers: the rest not read", file, 4*maxSessions))
			break
		}
	}
}

// changedSessions are the session files' names among names, a watch's
// changed entries of the config dir: "sessions/<pid>.json" (a backslash
// on Windows), at most maxSessions of them (the caller reads the whole
// dir past that).
func changedSessions(names []string) []string {
	var out []string
	for _, n := range names {
		dir, file := filepath.Split(n)
		if filepath.ToSlash(dir) == "sessions/" && sessionName().MatchString(file) && len(out) < maxSessions {
			out = append(out, file)
		}
	}
	sort.Strings(out)
	return out
}

// ReadChanged reads the config dir as Read does, but of its session files
// only those named (client.Updater): a watch's pass, told by inotify which
// sessions/ entries changed since its last read, reads those alone and
// keeps the others from that read (Merge).
func (Adapter) ReadChanged(dir string, names []string) *Raw { return readRaw(dir, names, true) }

// Merge is now, a read of the session files names name, with prev's other
// session files, their transcripts' tool calls and their MCP logs; the
// config, the daemon's records and what could not be read of them are
// now's. Past maxSessions, the oldest session files of claudes that are
// gone (platform.RecordOwnerLive: none of uid's or root's processes at
// the pid, started before the file) are let go of, as a full read leaves
// them past the bound; a live claude's is never let go of.
func (Adapter) Merge(prev, now *Raw, names []string, uid uint32) *Raw {
	out := *now
	changed := map[string]bool{}
	for _, n := range names {
		changed[filepath.Clean(n)] = true
	}
	sessions := filepath.Join(prev.Dir, "sessions")
	rel := func(file string) string {
		r, err := filepath.Rel(prev.Dir, file)
		if err != nil {
			return file
		}
		return r
	}
	var kept []Session
	for _, s := range prev.Sessions {
		if !changed[rel(s.File)] {
			kept = append(kept, s)
		}
	}
	out.Sessions = append(kept, now.Sessions...)
	if over := len(out.Sessions) - maxSessions; over > 0 {
		out.Sessions = letGo(out.Sessions, over, uid)
	}
	ids := map[string]bool{}
	for _, s := range out.Sessions {
		ids[s.SessionID] = true
	}
	seen := map[string]bool{}
	for _, s := range now.Sessions {
		seen[s.SessionID] = true
	}
	out.Tools = nil
	for _, c := range prev.Tools {
		if ids[c.Session] && !seen[c.Session] {
			out.Tools = append(out.Tools, c)
		}
	}
	out.Tools = append(out.Tools, now.Tools...)
	out.MCP = nil
	for _, m := range prev.MCP {
		if ids[m.Session] && !seen[m.Session] {
			out.MCP = append(out.MCP, m)
		}
	}
	out.MCP = append(out.MCP, now.MCP...)
	// What could not be read of the session files kept is still so.
	out.Problems = append([]statedir.Problem(nil), now.Problems...)
	for _, p := range prev.Problems {
		if filepath.Dir(p.File) == sessions && !changed[rel(p.File)] {
			out.Problems = append(out.Problems, p)
		}
	}
	for _, sk := range prev.Skipped {
		if strings.HasPrefix(sk, sessions+": ") {
			out.Skipped = append(out.Skipped, sk)
		}
	}
	return &out
}

// Unsettled are the session files raw could not parse (client.Updater):
// one read as Claude Code wrote it is read again by the next read by
// change, which no event of its end would otherwise bring.
func (Adapter) Unsettled(raw *Raw) []string {
	sessions := filepath.Join(raw.Dir, "sessions")
	var out []string
	for _, p := range raw.Problems {
		if filepath.Dir(p.File) == sessions && sessionName().MatchString(filepath.Base(p.File)) {
			out = append(out, filepath.Join("sessions", filepath.Base(p.File)))
		}
	}
	return out
}

// letGo drops n of sessions: the oldest by startedAt of those whose
// claude is gone; fewer when not that many are.
func letGo(sessions []Session, n int, uid uint32) []Session {
	order := make([]int, len(sessions))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(i, j int) bool { return sessions[order[i]].StartedAt < sessions[order[j]].StartedAt })
	drop := map[int]bool{}
	for _, k := range order {
		if len(drop) == n {
			break
		}
		s := sessions[k]
		if !platform.RecordOwnerLive(s.PID, uid, time.UnixMilli(s.StartedAt)) {
			drop[k] = true
		}
	}
	out := sessions[:0:0]
	for k, s := range sessions {
		if !drop[k] {
			out = append(out, s)
		}
	}
	return out
}

package policy

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os/user"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

//go:embed default.toml
var defaultPolicy string

// DefaultSource is the Source of the embedded default policy.
const DefaultSource = "embedded default"

// Default returns the embedded default policy, for the clients c: it
// only reports.
func Default(c Clients) *Policy {
	p, err := Parse(DefaultSource, []byte(defaultPolicy), c)
	if err != nil {
		panic("embedded default policy is invalid: " + err.Error())
	}
	return p
}

// DefaultText is the embedded default policy's TOML, for `policy show`.
func DefaultText() string { return defaultPolicy }

// MaxSize caps a policy file. A policy with a hundred rules is a few
// kilobytes; a cap keeps a policy path that names /dev/zero, or a huge file,
// from taking the reaper's memory (the TOML decoder holds several copies).
const MaxSize = 1 << 20

// Load reads and validates the policy file at path, for the clients c.
// The file is read as platform.ReadFile reads: a regular file (a FIFO or a
// device is refused, never waited on), at most MaxSize bytes.
func Load(path string, c Clients) (*Policy, error) {
	b, err := platform.ReadFile(path, MaxSize)
	if err != nil {
		msg := err.Error()
		var fe *platform.FileError
		if errors.As(err, &fe) {
			msg = fe.Err.Error()
		}
		return nil, &Error{File: path, Msg: msg, Err: err}
	}
	return Parse(path, b, c)
}

// Parse validates a policy for the clients c (the owner names a rule may
// name; the marks its scan applies). name is used in error messages. The
// error, if any, is an Errors listing every problem found.
func Parse(name string, data []byte, c Clients) (*Policy, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, Errors{{File: name, Line: errorLine(data, pe.Position), Msg: pe.Message}}
		}
		return nil, Errors{{File: name, Msg: err.Error()}}
	}
	l := &loader{file: name, lines: indexLines(string(data)), p: &Policy{Source: name, marks: c.Marks}, clients: c}
	l.document(doc)
	if len(l.errs) > 0 {
		sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
		return nil, l.errs
	}
	return l.p, nil
}

// errorLine is the line of a syntax error. The decoder counts a newline it
// stopped at into its line number ("[defaults⏎" is reported on the next
// line); the byte offset says where the problem really is.
func errorLine(data []byte, pos toml.Position) int {
	if pos.Start >= 0 && pos.Start < len(data) {
		return 1 + bytes.Count(data[:pos.Start], []byte{'\n'})
	}
	return pos.Line
}

// loader validates one document, collecting every error.
type loader struct {
	file    string
	lines   lineIndex
	p       *Policy
	errs    Errors
	clients Clients
}

// at names a place in the document: a table (with its index in an array of
// tables, or -1) and a key in it.
type at struct {
	table string
	index int
	key   string
}

func (l *loader) fail(a at, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Line: l.lines.line(a.table, a.index, a.key), Msg: fmt.Sprintf(format, args...)})
}

var topKeys = []string{"version", "defaults", "owner", "client", "subreaper", "rule", "protect"}

func (l *loader) document(doc map[string]any) {
	l.unknownKeys(doc, at{index: -1}, topKeys)
	switch v, ok := doc["version"]; {
	case !ok:
		l.fail(at{index: -1}, "version is missing: the first line of a policy is `version = 1`")
	case v != int64(1):
		l.fail(at{index: -1, key: "version"}, "unsupported version %v: this reaper reads version 1", v)
	}
	l.defaults(doc["defaults"])
	for i, t := range l.tables(doc, "owner") {
		l.owner(t, at{table: "owner", index: i})
	}
	for i, t := range l.tables(doc, "client") {
		l.client(t, at{table: "client", index: i})
	}
	for i, t := range l.tables(doc, "subreaper") {
		a := at{table: "subreaper", index: i}
		l.unknownKeys(t, a, []string{"comm", "cmdline"})
		re := l.regex(t, a, "cmdline")
		if re == nil {
			if _, given := t["cmdline"]; !given { // a bad one has its own error
				l.fail(a, "[[subreaper]] needs a cmdline")
			}
			continue
		}
		l.p.Subreapers = append(l.p.Subreapers, Subreaper{scan.Subreaper{Comm: l.regex(t, a, "comm"), Cmdline: re}, l.lines.line("subreaper", i, "")})
	}
	for i, t := range l.tables(doc, "rule") {
		l.rule(t, at{table: "rule", index: i})
	}
	for i, t := range l.tables(doc, "protect") {
		l.protect(t, at{table: "protect", index: i})
	}
}

func (l *loader) defaults(v any) {
	d := Defaults{Action: Report, Grace: 5 * time.Second, MinAge: 30 * time.Second, MaxActions: 100}
	if v != nil {
		t, ok := v.(map[string]any)
		a := at{table: "defaults", index: -1}
		if !ok {
			l.fail(at{index: -1, key: "defaults"}, "defaults must be a table: [defaults]")
		} else {
			l.unknownKeys(t, a, []string{"action", "grace", "min_age", "max_actions"})
			if act, ok := l.action(t, a); ok {
				d.Action = act
			}
			if g, ok := l.duration(t, a, "grace"); ok {
				if g <= 0 || g > 10*time.Minute {
					l.fail(at{a.table, a.index, "grace"}, "grace %s: want more than 0 and at most 10m", g)
				}
				d.Grace = g
			}
			if m, ok := l.duration(t, a, "min_age"); ok {
				d.MinAge = m
			}
			if n, ok := t["max_actions"]; ok {
				if i, isInt := n.(int64); !isInt || i < 0 {
					l.fail(at{a.table, a.index, "max_actions"}, "max_actions must be a whole number ≥ 0")
				} else {
					d.MaxActions = int(i)
				}
			}
		}
	}
	l.p.Defaults = d
}

func (l *loader) owner(t map[string]any, a at) {
	l.unknownKeys(t, a, []string{"name", "cmdline", "pid_env", "cgroup", "ledger"})
	o := Owner{Line: l.lines.line(a.table, a.index, "")}
	o.Name = l.name(t, a, "owner")
	o.Cmdline = l.regex(t, a, "cmdline")
	if _, given := t["cmdline"]; !given { // a bad one has its own error
		l.fail(a, "[[owner]] %q needs a cmdline: it is how a live owner is recognised", o.Name)
	}
	if s, ok := l.str(t, a, "pid_env"); ok {
		if !envName.MatchString(s) {
			l.fail(at{a.table, a.index, "pid_env"}, "pid_env %q is not an environment variable name", s)
		}
		o.PIDEnv = s
	}
	o.Cgroup = l.regex(t, a, "cgroup")
	o.Ledger = l.strings(t, a, "ledger")
	for _, prev := range l.p.Owners {
		if prev.Name == o.Name && o.Name != "" {
			l.fail(at{a.table, a.index, "name"}, "owner %q is defined twice (first on line %d)", o.Name, prev.Line)
		}
	}
	if len(l.p.Owners) == scan.MaxOwners {
		l.fail(a, "more than %d [[owner]] entries", scan.MaxOwners)
		return
	}
	l.p.Owners = append(l.p.Owners, o)
}

var ruleKeys = []string{"name", "when", "kind", "owner", "cmdline", "env", "cgroup", "user", "min_age", "min_rss", "action"}

func (l *loader) rule(t map[string]any, a at) {
	l.unknownKeys(t, a, ruleKeys)
	r := Rule{Line: l.lines.line(a.table, a.index, ""), Action: l.p.Defaults.Action}
	r.Name = l.name(t, a, "rule")
	when := l.strings(t, a, "when")
	if _, ok := t["when"]; !ok {
		l.fail(a, "rule %q needs when = [...]: the reasons it applies to (%s)", r.Name, joinReasons())
	} else if len(when) == 0 {
		l.fail(at{a.table, a.index, "when"}, "rule %q has an empty when: it would match nothing; name the reasons it applies to (%s)", r.Name, joinReasons())
	}
	for _, w := range when {
		if !validReason(w) {
			l.fail(at{a.table, a.index, "when"}, "unknown reason %q in rule %q; reasons are %s", w, r.Name, joinReasons())
		}
		r.When = append(r.When, scan.Reason(w))
	}
	for _, k := range l.strings(t, a, "kind") {
		if !validKind(k) {
			l.fail(at{a.table, a.index, "kind"}, "unknown kind %q in rule %q; kinds are %s", k, r.Name, joinKinds())
		}
		r.Kind = append(r.Kind, scan.Kind(k))
	}
	for _, o := range l.strings(t, a, "owner") {
		if !l.knownOwner(o) {
			l.fail(at{a.table, a.index, "owner"}, "unknown owner %q in rule %q; owners are %s", o, r.Name, strings.Join(l.ownerNames(), ", "))
		}
		r.Owner = append(r.Owner, o)
	}
	r.Matchers = l.matchers(t, a, true)
	if d, ok := l.duration(t, a, "min_age"); ok {
		r.MinAge = d
	}
	if s, ok := l.size(t, a, "min_rss"); ok {
		r.MinRSS = s
	}
	if act, ok := l.action(t, a); ok {
		r.Action = act
	}
	for _, prev := range l.p.Rules {
		if prev.Name == r.Name && r.Name != "" {
			l.fail(at{a.table, a.index, "name"}, "rule %q is defined twice (first on line %d)", r.Name, prev.Line)
		}
	}
	if why := broad(&r); why != "" {
		l.p.Warnings = append(l.p.Warnings, fmt.Sprintf("%s:%d: rule %q %ss %s: a tmux or screen server, a nohup'd job and a daemon started by hand are such trees; "+
			"give it a kind, an owner, a cmdline, env or cgroup, or user = [\"@evidence\"], or make it report", l.file, r.Line, r.Name, r.Action, why))
	}
	l.p.Rules = append(l.p.Rules, r)
}

// broad says what an acting rule takes when nothing but the tree's shape
// confines it — reasons any process PID 1 adopts has (reparented,
// untracked) and no kind, owner, command, environment, cgroup or
// evidence — or "" when something does.
func broad(r *Rule) string {
	if r.Action == Report || len(r.Kind) > 0 || len(r.Owner) > 0 || r.Cmdline != nil || len(r.Env) > 0 || r.Cgroup != nil || r.Evidence {
		return ""
	}
	var shape []string
	for _, w := range r.When {
		if w != scan.Reparented && w != scan.Untracked {
			return ""
		}
		shape = append(shape, string(w))
	}
	who := "of every user"
	if r.UIDs != nil {
		who = "of its users"
	}
	return "every " + strings.Join(shape, " or ") + " tree " + who + ", of any kind, on its shape alone"
}

// ownerNames are the names a finding can be attributed to: the policy's
// [[owner]] entries' and those the agent clients' evidence uses.
func (l *loader) ownerNames() []string {
	var out []string
	for _, o := range l.p.Owners {
		out = append(out, o.Name)
	}
	for _, c := range l.p.Clients {
		out = append(out, c.Name)
	}
	return append(out, l.clients.Owners...)
}

// client reads a [[client]]: name, command (a regex over its own
// processes' command lines), kind (acp unless said), pid_env (the
// variables naming its pid or its launcher's). Its marks join the shipped
// clients' (scan.CommandMark with its name as owner, scan.PIDMark).
func (l *loader) client(t map[string]any, a at) {
	l.unknownKeys(t, a, []string{"name", "command", "kind", "pid_env", "session_files", "session_pid", "session_started", "session_env", "session_id"})
	c := DeclaredClient{Line: l.lines.line(a.table, a.index, ""), Kind: scan.KindACP}
	c.Name = l.name(t, a, "client")
	switch {
	case c.Name != "" && (l.knownOwner(c.Name) || slices.Contains(l.clients.Names, c.Name)):
		l.fail(at{a.table, a.index, "name"}, "client %q is already an owner's or a shipped client's name: give it its own", c.Name)
	case strings.ContainsAny(c.Name, ":/\x00") || len(c.Name) > 64:
		l.fail(at{a.table, a.index, "name"}, "client name %q: at most 64 bytes, without ':' or '/'", c.Name)
	}
	c.Command = l.regex(t, a, "command")
	if _, given := t["command"]; !given { // a bad one has its own error
		l.fail(a, "[[client]] %q needs a command: the regex its own processes' command lines match", c.Name)
	}
	if k, ok := l.str(t, a, "kind"); ok {
		switch kind := scan.Kind(k); kind {
		case scan.KindACP, scan.KindMCP, scan.KindExec, scan.KindOther:
			c.Kind = kind
		default:
			l.fail(at{a.table, a.index, "kind"}, "kind %q: want acp, mcp, exec or other", k)
		}
	}
	for _, e := range l.strings(t, a, "pid_env") {
		if !envName.MatchString(e) {
			l.fail(at{a.table, a.index, "pid_env"}, "pid_env %q is not an environment variable name", e)
			continue
		}
		c.PIDEnv = append(c.PIDEnv, e)
	}
	c.Sessions = l.sessionFiles(t, a)
	if c.Name == "" || c.Command == nil {
		return
	}
	l.p.Clients = append(l.p.Clients, c)
	m := scan.Marks{Commands: []scan.CommandMark{{Cmdline: c.Command, Kind: c.Kind, Owner: c.Name}}}
	for _, e := range c.PIDEnv {
		m.PIDs = append(m.PIDs, scan.PIDMark{Env: e, Owner: c.Name})
	}
	// A fresh copy: the shipped clients' marks are shared by every policy.
	var all scan.Marks
	all.Add(l.p.marks)
	all.Add(m)
	l.p.marks = all
}

// sessionFiles reads a [[client]]'s session_* keys (SessionFiles), or
// returns nil when it gives none.
func (l *loader) sessionFiles(t map[string]any, a at) *SessionFiles {
	given := false
	for _, k := range []string{"session_files", "session_pid", "session_started", "session_env", "session_id"} {
		_, ok := t[k]
		given = given || ok
	}
	if !given {
		return nil
	}
	key := func(k string) at { return at{a.table, a.index, k} }
	s := &SessionFiles{PID: "pid"}
	files, ok := l.str(t, a, "session_files")
	if _, present := t["session_files"]; !present {
		l.fail(a, "session_* keys need session_files: the glob under the home (~/...) where the client keeps a file per session")
	}
	if ok {
		if why := s.SetFiles(files); why != "" {
			l.fail(key("session_files"), "session_files %q: %s", files, why)
		}
	}
	if v, ok := l.str(t, a, "session_pid"); ok {
		switch {
		case v == "@name":
			s.PID, s.PIDFromName = "", true
		case !jsonKey.MatchString(v):
			l.fail(key("session_pid"), "session_pid %q: want a key of the file's top-level object (letters, digits, '_', '-', '.'), or \"@name\" for the number its name begins with", v)
		default:
			s.PID = v
		}
	}
	for _, f := range []struct {
		k string
		v *string
	}{{"session_started", &s.Started}, {"session_id", &s.ID}} {
		if v, ok := l.str(t, a, f.k); ok {
			if !jsonKey.MatchString(v) {
				l.fail(key(f.k), "%s %q: want a key of the file's top-level object (letters, digits, '_', '-', '.')", f.k, v)
				continue
			}
			*f.v = v
		}
	}
	if v, ok := l.str(t, a, "session_env"); ok {
		if !envName.MatchString(v) {
			l.fail(key("session_env"), "session_env %q is not an environment variable name", v)
		} else {
			s.Env = v
		}
	}
	// A session ties by its id: a pid a file names may be another
	// process's now, whose children carry the same pid variable.
	for _, k := range []string{"session_env", "session_id"} {
		if _, ok := t[k]; !ok {
			l.fail(a, "session files need session_env and session_id: the variable the client puts on what it spawns, and the key of the session's id in a file, whose value that variable holds (%s is missing)", k)
		}
	}
	return s
}

// jsonKey is a key of a session file's top-level object a policy may name.
var jsonKey = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// SetFiles sets the dir and pattern of a session_files glob, or says why
// it is not one: "~/" and a path below the home, wildcards (filepath.Match)
// in its last element only.
func (s *SessionFiles) SetFiles(glob string) string {
	rel, ok := strings.CutPrefix(glob, "~/")
	if !ok {
		return "want a glob under the user's home, beginning with ~/ (it is read in each user's home, as that user)"
	}
	dir, pattern := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case dir == "" || path.Clean(dir) != dir || dir == "." || strings.HasPrefix(dir, "../") || dir == "..":
		return "want the files in a directory below the home (~/.client/sessions/*.json), named plainly: no '.', '..' or '//'"
	case strings.ContainsAny(dir, "*?[\\"):
		return "wildcards go in the last element only: the directory is a fixed path"
	case pattern == "":
		return "name the files: a pattern in the last element (*.json)"
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return "bad pattern " + strconv.Quote(pattern) + ": " + err.Error()
	}
	s.Dir, s.Pattern = dir, pattern
	return ""
}

func (l *loader) knownOwner(name string) bool { return slices.Contains(l.ownerNames(), name) }

func (l *loader) protect(t map[string]any, a at) {
	l.unknownKeys(t, a, []string{"name", "cmdline", "env", "cgroup", "user"})
	pr := Protect{Line: l.lines.line(a.table, a.index, "")}
	pr.Name = l.name(t, a, "protect")
	pr.Matchers = l.matchers(t, a, false)
	given := func(key string) bool { _, ok := t[key]; return ok } // a bad value has its own error
	if !given("cmdline") && !given("env") && !given("cgroup") && !given("user") {
		l.fail(a, "[[protect]] %q matches nothing: give cmdline, env, cgroup or user", pr.Name)
	}
	l.p.Protect = append(l.p.Protect, pr)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EvidenceUser, in a rule's "user" list, names the users the finding's
// own evidence speaks for (Matchers.Evidence). No user name holds "@".
const EvidenceUser = "@evidence"

// matchers reads the conditions of a rule (rule true) or protect entry.
func (l *loader) matchers(t map[string]any, a at, rule bool) Matchers {
	var m Matchers
	m.Cmdline = l.regex(t, a, "cmdline")
	m.Cgroup = l.regex(t, a, "cgroup")
	for _, e := range l.strings(t, a, "env") {
		name, value, hasValue := strings.Cut(e, "=")
		if !envName.MatchString(name) {
			l.fail(at{a.table, a.index, "env"}, "env %q: want NAME or NAME=REGEX", e)
			continue
		}
		em := EnvMatcher{Name: name}
		if hasValue {
			re, err := regexp.Compile(value)
			if err != nil {
				l.fail(at{a.table, a.index, "env"}, "env %q: bad regex: %s", e, regexWhy(err))
				continue
			}
			em.Value = re
		}
		m.Env = append(m.Env, em)
	}
	if _, ok := t["user"]; ok {
		m.UIDs = []uint32{}
		for _, u := range l.strings(t, a, "user") {
			if u == EvidenceUser {
				if !rule {
					l.fail(at{a.table, a.index, "user"}, "user %q: only a rule can name the users its evidence speaks for", u)
				}
				m.Evidence = true
				continue
			}
			uid, err := lookupUID(u)
			if err != nil {
				why := err.Error()
				if errors.As(err, new(user.UnknownUserError)) {
					why = "no such user on this host"
				}
				l.p.Warnings = append(l.p.Warnings, fmt.Sprintf("%s:%d: user %q: %s; it matches nothing", l.file, l.lines.line(a.table, a.index, "user"), u, why))
				continue
			}
			m.UIDs = append(m.UIDs, uid)
		}
	}
	return m
}

// UserName is the name this host gives uid, or "" when it has none.
func UserName(uid uint32) string { return userNames(uid) }

// userNames looks names up in the host's account database; tests give
// their own, so that none depends on what this host's passwd holds.
var userNames = func(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
		return u.Username
	}
	return ""
}

func lookupUID(name string) (uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(n), err
}

// tables returns the array of tables named key ([[key]]).
func (l *loader) tables(doc map[string]any, key string) []map[string]any {
	v, ok := doc[key]
	if !ok {
		return nil
	}
	ts, ok := v.([]map[string]any)
	if !ok {
		l.fail(at{index: -1, key: key}, "%s must be an array of tables: write [[%s]]", key, key)
		return nil
	}
	return ts
}

func (l *loader) unknownKeys(t map[string]any, a at, known []string) {
	for k := range t {
		found := false
		for _, kk := range known {
			found = found || k == kk
		}
		if !found {
			where := "at the top level"
			if a.table != "" {
				where = "in [" + a.table + "]"
				if a.index >= 0 {
					where = "in [[" + a.table + "]]"
				}
			}
			l.fail(at{a.table, a.index, k}, "unknown key %q %s; known keys are %s", k, where, strings.Join(known, ", "))
		}
	}
}

func (l *loader) str(t map[string]any, a at, key string) (string, bool) {
	v, ok := t[key]
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		l.fail(at{a.table, a.index, key}, "%s must be a string, not %s", key, tomlType(v))
		return "", false
	}
	return s, true
}

func (l *loader) strings(t map[string]any, a at, key string) []string {
	v, ok := t[key]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		l.fail(at{a.table, a.index, key}, "%s must be a list of strings, like %s = [\"…\"]", key, key)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, isStr := e.(string)
		if !isStr {
			l.fail(at{a.table, a.index, key}, "%s must be a list of strings; found %s", key, tomlType(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (l *loader) name(t map[string]any, a at, what string) string {
	s, ok := l.str(t, a, "name")
	if !ok || strings.TrimSpace(s) == "" {
		if _, present := t["name"]; !present {
			l.fail(a, "[[%s]] needs a name", what)
		} else if ok {
			l.fail(at{a.table, a.index, "name"}, "[[%s]] name is empty: give it a name the reports can show", what)
		}
		return ""
	}
	return s
}

func (l *loader) regex(t map[string]any, a at, key string) *regexp.Regexp {
	s, ok := l.str(t, a, key)
	if !ok {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		l.fail(at{a.table, a.index, key}, "%s %q: bad regex: %s", key, s, regexWhy(err))
		return nil
	}
	return re
}

func (l *loader) duration(t map[string]any, a at, key string) (time.Duration, bool) {
	s, ok := l.str(t, a, key)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		l.fail(at{a.table, a.index, key}, "%s %q is not a duration: write it like \"30s\", \"2m\" or \"1h30m\"", key, s)
		return 0, false
	}
	return d, true
}

// regexWhy is what is wrong with a regex, without the package's prefix:
// "missing closing ]: `[a-z`".
func regexWhy(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%s: `%s`", se.Code, se.Expr)
	}
	return err.Error()
}

// quoted is a value as the policy wrote it: a string in quotes, else as
// is.
func quoted(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func (l *loader) size(t map[string]any, a at, key string) (uint64, bool) {
	v, ok := t[key]
	if !ok {
		return 0, false
	}
	if n, isInt := v.(int64); isInt && n >= 0 {
		return uint64(n), true
	}
	s, _ := v.(string)
	n, err := ParseSize(s)
	if err != nil {
		l.fail(at{a.table, a.index, key}, "%s %s is not a size: write it like \"50MiB\", \"1GiB\" or a number of bytes", key, quoted(v))
		return 0, false
	}
	return n, true
}

func (l *loader) action(t map[string]any, a at) (Action, bool) {
	s, ok := l.str(t, a, "action")
	if !ok {
		return "", false
	}
	if act := Action(s); slices.Contains(Actions, act) {
		return act, true
	}
	names := make([]string, len(Actions))
	for i, a := range Actions {
		names[i] = string(a)
	}
	l.fail(at{a.table, a.index, "action"}, "unknown action %q; actions are %s", s, strings.Join(names, ", "))
	return "", false
}

var sizePattern = regexp.MustCompile(`^\s*([0-9]+)\s*([KMGT]i?B?|B)?\s*$`)

// ParseSize parses a size such as "50MiB", "1GiB", "512KB" or "4096".
// KiB, MiB, GiB, TiB are powers of 1024; KB, MB, GB, TB of 1000.
func ParseSize(s string) (uint64, error) {
	m := sizePattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number with B, KB, KiB, MB, MiB, GB, GiB, TB or TiB", s)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	unit := strings.TrimSuffix(m[2], "B")
	mult := uint64(1)
	if unit != "" {
		base := uint64(1000)
		if strings.HasSuffix(unit, "i") {
			base = 1024
		}
		for i := 0; i < strings.Index("KMGT", unit[:1])+1; i++ {
			mult *= base
		}
	}
	if n > 0 && mult > ^uint64(0)/n {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func validReason(s string) bool {
	for _, r := range scan.Reasons {
		if string(r) == s {
			return true
		}
	}
	return false
}

func validKind(s string) bool {
	for _, k := range scan.Kinds {
		if string(k) == s {
			return true
		}
	}
	return false
}

func joinReasons() string {
	var s []string
	for _, r := range scan.Reasons {
		s = append(s, string(r))
	}
	return strings.Join(s, ", ")
}

func joinKinds() string {
	var s []string
	for _, k := range scan.Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

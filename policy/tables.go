package policy

import (
	"errors"
	"fmt"
	"os/user"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/scan"
)

func (l *loader) defaults(v any) {
	d := Defaults{Action: Report, Grace: 5 * time.Second, MinAge: 30 * time.Second, MaxActions: 100, StormRate: DefaultStormRate, StormFor: DefaultStormFor}
	if v != nil {
		t, ok := v.(map[string]any)
		a := at{table: "defaults", index: -1}
		if !ok {
			l.fail(at{index: -1, key: "defaults"}, "defaults must be a table: [defaults]")
		} else {
			l.unknownKeys(t, a, []string{"action", "grace", "min_age", "max_actions", "storm_rate", "storm_for"})
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
			if n, ok := t["storm_rate"]; ok {
				if i, isInt := n.(int64); !isInt || i < 0 || i > 100000 {
					l.fail(at{a.table, a.index, "storm_rate"}, "storm_rate must be a whole number of processes a second, 0 (never said) to 100000")
				} else {
					d.StormRate = int(i)
				}
			}
			if f, ok := l.duration(t, a, "storm_for"); ok {
				if f < time.Second || f > time.Hour || f%time.Second != 0 {
					l.fail(at{a.table, a.index, "storm_for"}, "storm_for %s: want whole seconds, 1s to 1h", f)
				}
				d.StormFor = f
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
		if !envName().MatchString(s) {
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

var ruleKeys = []string{"name", "when", "kind", "owner", "cmdline", "env", "cgroup", "user", "min_age", "min_rss", "action", "override_keep"}

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
	if v, ok := t["override_keep"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			l.fail(at{a.table, a.index, "override_keep"}, "override_keep must be true or false, not %s", tomlType(v))
		}
		r.OverrideKeep = b
		if b && r.Action != Report {
			l.p.Warnings = append(l.p.Warnings, fmt.Sprintf("%s:%d: rule %q has override_keep = true: it %ss trees whose processes ask to be kept (%s=1), a daemon that detached on purpose among them",
				l.file, r.Line, r.Name, r.Action, KeepEnv))
		}
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

// msix reads an [[msix]]: name (the owner its containers' leftovers are
// attributed to) and family, a regex over the package family name
// (Claude_pzs8sxrjxfjjc; '.' for any MSIX app's).
func (l *loader) msix(t map[string]any, a at) {
	l.unknownKeys(t, a, []string{"name", "family"})
	app := App{Line: l.lines.line(a.table, a.index, "")}
	app.Name = l.name(t, a, "msix")
	app.Family = l.regex(t, a, "family")
	if _, given := t["family"]; !given { // a bad one has its own error
		l.fail(a, "[[msix]] %q needs a family: the regex its package family name (Name_PublisherId) matches", app.Name)
	}
	if app.Name != "" && l.knownOwner(app.Name) {
		l.fail(at{a.table, a.index, "name"}, "msix %q is already an owner's name: give it its own", app.Name)
	}
	if len(l.p.Apps) == scan.MaxOwners {
		l.fail(a, "more than %d [[msix]] entries", scan.MaxOwners)
		return
	}
	if app.Name != "" && app.Family != nil {
		l.p.Apps = append(l.p.Apps, app)
	}
}

// ownerNames are the names a finding can be attributed to: the policy's
// [[owner]] and [[msix]] entries' and those the agent clients' evidence
// uses.
func (l *loader) ownerNames() []string {
	var out []string
	for _, o := range l.p.Owners {
		out = append(out, o.Name)
	}
	for _, a := range l.p.Apps {
		out = append(out, a.Name)
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
		if !envName().MatchString(e) {
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
	m := scan.Marks{Commands: []scan.CommandMark{{Cmdline: scan.NewPattern(c.Command), Kind: c.Kind, Owner: c.Name}}}
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
		case !jsonKey().MatchString(v):
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
			if !jsonKey().MatchString(v) {
				l.fail(key(f.k), "%s %q: want a key of the file's top-level object (letters, digits, '_', '-', '.')", f.k, v)
				continue
			}
			*f.v = v
		}
	}
	if v, ok := l.str(t, a, "session_env"); ok {
		if !envName().MatchString(v) {
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
var jsonKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`) })

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

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

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
		if !envName().MatchString(name) {
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

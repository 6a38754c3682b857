package policy

import (
	"regexp"
	"time"

	"github.com/orphanreaper/reaper/scan"
)

// Action is what a rule asks for.
type Action string

// The actions a rule may take (docs/policy.md).
const (
	// Report lists the finding and sends nothing.
	Report Action = "report"
	// Terminate stops the tree, sends SIGTERM (+SIGCONT), waits grace, then
	// SIGKILLs what remains.
	Terminate Action = "terminate"
	// Kill sends SIGKILL straight away.
	Kill Action = "kill"
)

// Actions are every action a rule may take, the gentlest first: the one
// list the loader, doctor and the report schemas' enums (a test of
// audit's) read. A new action is added here, and in reap's path.
var Actions = []Action{Report, Terminate, Kill}

// Policy is a validated policy file.
type Policy struct {
	// Source is the file it came from, or "embedded default".
	Source   string
	Defaults Defaults
	Owners   []Owner
	// Apps are the MSIX apps whose containers' leftovers are owner-dead
	// ([[msix]]).
	Apps       []App
	Subreapers []Subreaper
	Rules      []Rule
	Protect    []Protect
	// Clients are the agent clients the policy declares, for those reaper
	// ships no adapter for: their marks join the shipped clients'.
	Clients []DeclaredClient
	// Warnings are things that are not errors but an operator should see,
	// such as a user name this host does not know.
	Warnings []string
	// marks are the clients' marks, which the scan applies whatever the
	// policy says (Clients).
	marks scan.Marks
}

// Clients is what a policy knows of the agent clients, given by whoever
// loads it (cmd hands down client/all's; a test, the clients it chooses):
// the owner names their evidence attributes findings to, which a rule's
// owner matcher may name, and their marks, which the scan applies whatever
// the policy says. The policy package imports no client.
type Clients struct {
	Owners []string
	Marks  scan.Marks
	// Names are the shipped clients' names (client.Info.Name): a
	// [[client]] may not take one.
	Names []string
}

// DeclaredClient is a [[client]]: an agent client reaper ships no adapter
// for, recognised by its command line (its own processes, kind Kind) and
// the variables it puts on what it spawns that name its pid or its
// launcher's. Its name is an owner name rules may name.
type DeclaredClient struct {
	Name    string
	Command *regexp.Regexp
	Kind    scan.Kind
	PIDEnv  []string
	// Sessions, when set, are the session files it keeps in its users'
	// homes, which name its pid (client/declared reads them).
	Sessions *SessionFiles
	Line     int
}

// SessionFiles say where a declared client keeps a file per session and
// what in it names the session's process: session_files, a glob under the
// user's home (wildcards in its last element only), of JSON objects whose
// key PID holds the client's pid (PIDFromName: the number the file's name
// begins with), Started when it started (milliseconds since the epoch or
// RFC 3339), and ID the session's id, which the client puts on what it
// spawns as Env. A session ties to it the trees whose root carries Env=id.
type SessionFiles struct {
	Dir     string // below the home, clean and relative
	Pattern string // the files' names (filepath.Match)
	PID     string
	// PIDFromName: the pid is the number the file's name begins with.
	PIDFromName bool
	Started     string
	Env, ID     string
}

// Defaults apply where a rule says nothing.
type Defaults struct {
	Action     Action
	Grace      time.Duration // between SIGTERM and SIGKILL
	MinAge     time.Duration // never act on a process younger than this
	MaxActions int           // per run; past it, report only
	// StormRate is the processes a second one parent may start, and
	// StormFor how long, before a watch says it is a fork storm (0: never
	// said). Said only: a storm is never signalled for.
	StormRate int
	StormFor  time.Duration
}

// Default fork storm threshold: runaway agent process growth panicked
// macOS kernels at ~43 spawns a second (anthropics/claude-code #80362);
// a build or a test suite forks faster than 30 a second only in bursts.
const (
	DefaultStormRate = 30
	DefaultStormFor  = 2 * time.Second
)

// Owner recognises a live supervisor (scan.Owner: its name, command line,
// pid marker and service cgroup) and names the ledgers it writes.
type Owner struct {
	scan.Owner
	Ledger []string
	Line   int
}

// App is an MSIX app whose container reaper looks into ([[msix]]): its
// name is the owner its leftovers are attributed to, which a rule's owner
// list names.
type App struct {
	scan.App
	Line int
}

// Subreaper names a process that adopts orphans, besides PID 1 and systemd
// user managers (scan.Subreaper). Its comm, when set, must match the
// kernel's process name (from stat) before the command line is read:
// subreapers are a few known programs, and reading the argv of every
// process that has children would cost a file read each.
type Subreaper struct {
	scan.Subreaper
	Line int
}

// Matchers are the conditions a rule or protect entry puts on processes.
// Every matcher set must hold (AND); within a list any element may (OR).
type Matchers struct {
	Cmdline *regexp.Regexp
	Env     []EnvMatcher
	Cgroup  *regexp.Regexp
	// UIDs are the users named by "user"; nil means any user.
	UIDs []uint32
	// Evidence is "@evidence" in a rule's "user" list: the users the
	// finding's own evidence speaks for (scan.Finding.SpokenFor) — the
	// owner of the state that proves it, or of the process carrying the
	// marker — besides any named.
	Evidence bool
}

// EnvMatcher is "NAME" (present) or "NAME=REGEX" (present and matching).
type EnvMatcher struct {
	Name  string
	Value *regexp.Regexp // nil: presence is enough
}

// Rule selects findings and says what to do with them. The first rule that
// matches a finding wins, in file order.
type Rule struct {
	Name string
	When []scan.Reason // any of these
	Kind []scan.Kind   // any of these; empty means any kind
	// Owner: the finding is attributed to one of these (by a marker, a
	// cgroup, a ledger or a client's tie); empty means any or none.
	Owner []string
	Matchers
	MinAge time.Duration
	MinRSS uint64
	Action Action
	Line   int
	// Builtin, set by code for a rule of its own (reaper run's
	// run-leftover), says what to do where a refusal would advise editing
	// the rule: no file holds it.
	Builtin string
	// OverrideKeep: the rule acts on trees that ask to be kept
	// (REAPER_KEEP=1), as the rule says explicitly (override_keep).
	OverrideKeep bool
}

// Protect names processes that are never signalled, whatever a rule says.
type Protect struct {
	Name string
	Matchers
	Line int
}

// EnvNames are the environment variables the policy looks up: the keep
// mark (KeepEnv), its rules' and protect entries' env matchers, its
// owners' pid markers and its declared clients'.
func (p *Policy) EnvNames() []string {
	names := []string{KeepEnv}
	for _, c := range p.Clients {
		names = append(names, c.PIDEnv...)
		if c.Sessions != nil && c.Sessions.Env != "" {
			names = append(names, c.Sessions.Env)
		}
	}
	for _, o := range p.Owners {
		if o.PIDEnv != "" {
			names = append(names, o.PIDEnv)
		}
	}
	for _, ms := range p.matchers() {
		for _, e := range ms.Env {
			names = append(names, e.Name)
		}
	}
	return names
}

func (p *Policy) matchers() []*Matchers {
	var out []*Matchers
	for i := range p.Rules {
		out = append(out, &p.Rules[i].Matchers)
	}
	for i := range p.Protect {
		out = append(out, &p.Protect[i].Matchers)
	}
	return out
}

// ScanConfig is what the scan needs: the policy's owners and subreapers,
// and the agent clients' marks (Clients), which no policy turns off.
func (p *Policy) ScanConfig() scan.Config {
	cfg := scan.Config{Marks: p.marks}
	for _, o := range p.Owners {
		cfg.Owners = append(cfg.Owners, o.Owner)
	}
	for _, s := range p.Subreapers {
		cfg.Subreapers = append(cfg.Subreapers, s.Subreaper)
	}
	for _, a := range p.Apps {
		cfg.Apps = append(cfg.Apps, a.App)
	}
	return cfg
}

package scan

import (
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// This file is the port agent clients' adapters feed (package client lists
// them): what a client's state and conventions say, as plain data. scan
// applies it the same way for every client and knows none by name.

// Gather reads a scan's evidence, given the live owners the scan met and
// the roots of the trees it found orphaned (whose environments may name
// the state of the owner that left them).
type Gather func(liveOwners, roots []*platform.Process) (Evidence, error)

// Evidence is what a run read besides the process table: the ledgers
// (files, and clients' state as ledgers), the ties clients' state makes
// between markers and owners, the MCP servers clients' configs declare,
// and the advisers of clients that have advice.
type Evidence struct {
	Ledgers  []*ledger.Ledger
	Ties     []Tie
	Servers  []Server
	Advisers []Adviser
	// Sessions are the sessions the clients' records name, live or not:
	// what `reaper ps` groups processes by. Attribution never reads them.
	Sessions []Session
}

// Add appends what o holds.
func (e *Evidence) Add(o Evidence) {
	e.Ledgers = append(e.Ledgers, o.Ledgers...)
	e.Ties = append(e.Ties, o.Ties...)
	e.Servers = append(e.Servers, o.Servers...)
	e.Advisers = append(e.Advisers, o.Advisers...)
	e.Sessions = append(e.Sessions, o.Sessions...)
}

// Session is one session as a client's own record names it (a session
// file, a lock, a ledger's owner): whose word it is, the process it
// names, and what else the record says. It is shown, never acted on.
type Session struct {
	// Owner is the process the record names (Name is the owner name the
	// client's findings carry).
	Owner ledger.Owner
	ID    string
	// Dir is the session's working directory, Kind what the record calls
	// the session ("interactive", "bg"), when it says.
	Dir, Kind string
	// Proof is the record, in words ("the session file /h/…/1234.json").
	Proof   string
	Speaker uint32
	// Version is the client's version and Started the session's start, as
	// the record says (zero when it does not): all an ended session has
	// left to say of itself.
	Version string
	Started time.Time
}

// apply folds the evidence into the result in the one order that is
// right: the ledgers first (an owned run leaves the findings before
// anything is attributed, a proven run becomes a finding of its own), then
// the ties for what no ledger claimed, then the pids the clients' pid
// marks name (a pid named outright says more than a process group), then
// the process groups of what the clients' leader marks name, then the
// clients' own live processes for what their spawner marks name, then the
// headless clients, then the declared MCP servers (the kind only). Advice
// is a phase of its own, over the final findings, asked by whoever wants
// it (Result.Advise).
func (r *Result) apply(ev Evidence) {
	r.sessions = ev.Sessions
	r.ApplyLedgers(ev.Ledgers)
	r.ApplyTies(ev.Ties)
	r.ApplyPIDMarks()
	r.ApplyLeaders()
	r.ApplySpawners()
	r.ApplyHeadless()
	r.ApplyServers(ev.Servers)
}

// Tie is a client's claim, read from its state, that the orphaned trees
// whose root carries its marker are an owner's: a gateway's lock for the
// processes that name its state dir; a session file for the
// processes that carry its session id.
type Tie struct {
	// Env=Value in the root's environment ties it. An empty Value ties any
	// value — a default place, which no variable names — and then only the
	// speaker's own processes, silently.
	Env, Value string
	// InList: the variable is a list of directories (PATH: ':'-separated,
	// ';' on a Windows table) and one of its entries need only begin with
	// Value, a directory ending in the table's separator ('/', '\' on
	// Windows); the evidence says so rather than quoting the whole list.
	InList bool
	// Unless: a root that carries this variable (not empty) is not tied by
	// this tie: it names another.
	Unless string
	// Strong names a variable only the client's own children carry: a root
	// with it is tied outright. Without it (Env alone may be exported by a
	// user's own shell) the root must have started after Since, when the
	// owner began; a zero Since ties no such root.
	Strong string
	Since  time.Time
	// Owner is who the state names; Speaker whose word it is.
	Owner   ledger.Owner
	Speaker uint32
	// Where says what Env=Value names ("state dir /srv/oc"), Proof what
	// names the owner ("the gateway lock /srv/oc/gateway.lock"), Noun what
	// the owner is ("gateway").
	Where, Proof, Noun string
}

// Server is an MCP server a client's config declares, by the command line
// it is spawned with: a scrubbed environment leaves it no marker, and an
// unusual name no fingerprint, so the config is what says it is an MCP
// server.
type Server struct {
	Name    string
	Command string
	Args    []string
	File    string // the config that declares it
	// UID owns the config: it speaks only for that user's processes.
	UID uint32
	// GroupOwner, where set, is the client that runs the servers of this
	// config as its own children, in its own process group, and puts no
	// marker on them: a server of it found orphaned is
	// that client's, and the group's leader gone proves the client gone
	// when the group is not its session's (LeaderMark's rule).
	GroupOwner string

	want []string // Args as words, once cut (MatchesWords)
	cut  bool
}

// Marks are what clients put on the processes they spawn and how their
// own helpers look, as each client's adapter declares them.
type Marks struct {
	// Env: a variable with a value that gives a tree its kind
	// (a client's SHELL=exec marker).
	Env []EnvMark
	// Commands: command lines that give a kind (a client's ACP wrapper).
	Commands []CommandMark
	// Supervisors are a client's own supervisor processes, which kill what
	// they track within seconds of losing their owner: a finding rooted at
	// one is left to finish (reap's settle wait).
	Supervisors []SupervisorMark
	// Leaders are the variables a client puts on what it spawns, whose
	// process group it leads: they tie an orphan to its client by the group.
	Leaders []LeaderMark
	// PIDs are the variables a client puts on what it spawns that name
	// its own pid or its launcher's: the named process gone proves the
	// client gone.
	PIDs []PIDMark
	// Spawners are the variables a client puts on what it spawns that
	// name no pid (a fixed value, as CLIENT_AGENT=true): the client's own
	// live processes, older than the root, are looked for instead.
	Spawners []SpawnerMark
	// Clients recognise each client's own processes, the ones a person
	// started: alive, such a process is a session wherever its parent
	// went (ApplyLiveClients).
	Clients []ClientMark
}

// Add appends every field of o to m: the one merge of several clients'
// marks (a field left out of a hand-written merge once left four clients'
// leader marks unused while each adapter's own tests passed;
// TestMarksAddEveryField holds every field here).
func (m *Marks) Add(o Marks) {
	m.Env = append(m.Env, o.Env...)
	m.Commands = append(m.Commands, o.Commands...)
	m.Supervisors = append(m.Supervisors, o.Supervisors...)
	m.Leaders = append(m.Leaders, o.Leaders...)
	m.PIDs = append(m.PIDs, o.PIDs...)
	m.Spawners = append(m.Spawners, o.Spawners...)
	m.Clients = append(m.Clients, o.Clients...)
}

// PIDMark ties a root that carries Env to the client Owner whose pid (or
// whose launcher's) Env's value is: the client set it on what it spawned,
// so the named process started before the root did. When no process has
// that pid now, or the one that has it started after the root (the pid was
// reused), or it is a zombie, the client is gone: the finding is
// owner-dead, with Env=value as the evidence. When it lives, the tree is
// its leak. The marker is in the root's own environment: it speaks for the
// root's user alone.
type PIDMark struct {
	Env   string
	Owner string
}

// LeaderMark ties a root that carries Env to the client Owner that leads
// its process group: a client's children keep its process group after it
// dies, and the kernel gives no new process a pid that a live group still
// holds (a struct pid is freed only once no task uses it as pid, pgid or
// sid: kernel/pid.c), so the group's leader pid is the same process for as
// long as the orphan lives. Its leader gone proves the client gone only
// when the leader is shown to be the client: Env's value is the leader's
// pid (PIDEnv), or the group is not its session's — a client
// run from a shell leads a job's group inside the shell's session, while a
// group that is its session's was made by setsid (Node's detached: true, a
// cron job), whose leader may be a helper that ended on purpose.
type LeaderMark struct {
	Env    string
	Owner  string // the owner name findings are attributed to (the client's)
	PIDEnv bool
}

// SpawnerMark ties a root that carries Env=Value to the client Owner,
// which puts it on everything it spawns and records its own pid nowhere
// (it sets the variable on itself at start, and its session files hold
// no pid). The client set it before it spawned anything, so the one
// that spawned the root started no later than the root did. When no
// process of the client's own (a ClientMark of Owner) that is the root's
// user's or root's, and started no later than the root, is alive, the
// client that spawned it is gone: the finding is owner-dead. When one is,
// it may be that one: the tree is the client's, not shown dead. The
// marker is in the root's own environment: it speaks for the root's user
// alone.
type SpawnerMark struct {
	Env, Value string
	Owner      string
}

// ClientMark recognises a client's own process — the one a person started,
// not a helper or a server it runs (Owner is the client's owner name):
// titled as the client (Comms: the kernel's comm, at most 15 bytes), or
// titled with a version and run from one of VersionDirs (a native build
// that titles itself "2.1.331"), or node running a script whose command
// line matches Script (a CLI that keeps node's title). Own asks it.
type ClientMark struct {
	Owner       string
	Comms       []string
	VersionDirs []string
	Script      *Pattern
}

// EnvMark gives Kind to a root whose environment holds Env=Value.
type EnvMark struct {
	Env, Value string
	Kind       Kind
}

// CommandMark gives Kind to a root whose command line matches Cmdline.
// Owner, where set, says the match is the client itself (its CLI, not a
// helper it runs): a client process headless once what launched it is gone
// (ApplyHeadless).
type CommandMark struct {
	Cmdline *Pattern
	Kind    Kind
	Owner   string
}

// SupervisorMark recognises one of a client's supervisor processes by its
// command line: Role names it (as people know it), Note says what it
// does once its owner is gone.
type SupervisorMark struct {
	Cmdline    *Pattern
	Role, Note string
}

// Adviser is a client's advice: configuration the operator should change,
// judged over the final findings and the table. It reads the result and
// returns its advice; it changes nothing.
type Adviser interface {
	Advise(r *Result, sample Sampler) []Advice
}

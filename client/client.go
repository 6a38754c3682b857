package client

import (
	"encoding/json"
	"slices"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Info is what a client is, fixed when reaper is built: facts, no
// behaviour.
type Info struct {
	// Name names the client in messages and in the reader's protocol: a
	// short word without ':' (openclaw).
	Name string
	// Title is the client as people call it (Claude Code), in messages
	// about its files.
	Title string
	// EnvNames are the variables scan must be able to look up on
	// processes (its markers).
	EnvNames []string
	// Owners are the owner names its evidence attributes findings to, for
	// a policy rule's owner matcher.
	Owners []string
	// Marks are the kinds, supervisors and leaders its processes show.
	Marks scan.Marks
	// Comms are the titles of the client's own processes as the kernel
	// keeps them (comm: at most 15 bytes, "openclaw-gatewa"): such a
	// process names its state dir in its environment wherever it runs.
	Comms []string
	// VersionDirs are the dirs a client's native binary runs from when it
	// titles itself with its version, as Claude Code's native build does
	// (~/.local/share/claude/versions/2.1.331: comm "2.1.331"): a process
	// whose comm is a version and whose command runs from one of them is
	// the client's own, as one whose comm is in Comms is (Own).
	VersionDirs []string
	// Script is the command line of the client's own process where the
	// client is a node script that leaves node's title (comm "node":
	// Continue's cn, `node …/@continuedev/cli/dist/cn.js`): such a
	// process is the client's own, as one whose comm is in Comms is.
	Script *scan.Pattern
	// Homes are the state dirs the client keeps in a home, as a person
	// writes them ("~/.claude"; a * stands for any text, "~/.openclaw-*"):
	// what help and doctor say reaper looks for, derived from the set,
	// never kept as a list of their own. The contract suite checks them
	// against HomeDirs.
	Homes []string
	// Announce are the dirs below a state dir where the client makes a
	// file when an owner starts (Claude Code's sessions/<pid>.json): a
	// watch takes a new entry there as a hint that the user's state names
	// a new owner to watch.
	Announce []string
	// RemoteServer is how the client registers an MCP server by its URL
	// (streamable HTTP), in its own words, NAME and URL standing for the
	// server's; empty where it has no such transport. ps gives it to a
	// server several of its sessions each run a copy of.
	RemoteServer string
	// Hook is where the client takes a command to run when a session
	// starts (reaper hook install), when it has such settings.
	Hook *Hook
}

// Hook is a client's session-start hook settings, as facts: the settings
// file is File in the dir DirEnv names when set and absolute, else in Dir
// of the home HomeEnv names (when set and absolute) or of the account's;
// its hooks object maps Event to an array of entries, each a matcher (in
// the client's own syntax) and the commands to run, each with a timeout
// in the client's own unit.
type Hook struct {
	DirEnv, HomeEnv, Dir, File string
	Event, Matcher             string
	Timeout                    int
	// JSONC: the client reads the file as JSON with comments and
	// trailing commas, which the settings editor then takes and keeps.
	JSONC bool
	// PickShell: a hook entry's "shell" names the shell its command runs
	// in, and on Windows reaper's says "powershell" (the client runs Git
	// Bash, or cmd.exe, otherwise); a client without it runs PowerShell
	// there always (Gemini CLI).
	PickShell bool
}

// Places says where a client keeps its state.
type Places interface {
	// HomeDirs lists the client's state dirs in one account's home that
	// exist and are that account's (uid).
	HomeDirs(home string, uid int) []string
	// OwnDirs lists the state dirs reaper's own environment names (getenv
	// reads it).
	OwnDirs(getenv func(string) string) []string
	// NamedDir is the state dir a process's environment names (env looks
	// a variable up), and the variable it came from: read from the live
	// owners, the processes of the client's Comms, and the roots of
	// orphaned trees (a dead owner's survivors lead to its state). gather
	// checks every such dir before it is read.
	// A dir guessed below the process's HOME says FromHome: one that does
	// not exist is no warning (most processes' homes hold no such dir).
	NamedDir(env func(string) (string, bool)) (dir, from string)
	// IsStateDir reports whether a directory an operator names is this
	// client's state.
	IsStateDir(dir string) bool
}

// FromHome is the from of a NamedDir guessed below a process's home (its
// HOME, or on Windows USERPROFILE: statedir.ProcessHome).
const FromHome = "HOME"

// Adapter is what one client's package implements, typed by its read R:
// plain data that crosses the reader child's boundary as JSON. An adapter
// proves it at compile time (var _ client.Adapter[Raw] = Adapter{}) and
// is erased to a Client once, by New.
type Adapter[R any] interface {
	Info() Info
	Places
	// Read reads one state dir — in the reader child, as the dir's owner,
	// under the kernel's limits. It must not fail: what could not be read
	// is in the data, for Judge.
	Read(dir string) *R
	// Judge turns a read into evidence spoken by uid (whom the reader ran
	// as), judged against snap (nil: no table; what needs one is left
	// out). problems cast doubt on uid's trees; warnings do not.
	Judge(r *R, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string)
}

// Updater is an Adapter whose records (the files its Announce dirs
// hold, one per session) can be read by name: a watch, told by the kernel
// which entries changed since its last read of a dir, reads those and
// keeps the rest of that read, so that a pass costs what changed, not
// what the dir has piled up.
type Updater[R any] interface {
	// ReadChanged is Read, but of the dir's records only those named
	// (relative to dir, as "sessions/1234.json"); one named and gone was
	// removed. Everything else of the dir is read as Read reads it.
	ReadChanged(dir string, names []string) *R
	// Merge is now, a ReadChanged of names, with the records of prev —
	// the dir's last read — that names do not name; uid is whose read
	// both are. It keeps the client's bound on records, letting go of
	// the oldest of processes that are gone.
	Merge(prev, now *R, names []string, uid uint32) *R
	// Unsettled are the records of r to read again at the next read by
	// change, though no change names them: those that could not be
	// parsed — a file read as it was being written, whose end no event
	// announces.
	Unsettled(r *R) []string
}

// Raw is what a read's pointer has: the head every state dir's read
// begins with (statedir.Head, embedded), and what the read says without
// casting doubt.
type Raw interface {
	StateHead() *statedir.Head
	Warnings() []string
}

// Client is an adapter as the rest of reaper handles it: its read erased
// to JSON here, once, and decoded back to its own type by its own Decode.
type Client interface {
	Info() Info
	Places
	// Read is the adapter's Read of dir as one line of JSON: what a reader
	// child prints.
	Read(dir string) []byte
	// ReadChanged is the adapter's ReadChanged (Updater), as Read prints
	// it; an adapter that is no Updater reads everything.
	ReadChanged(dir string, names []string) []byte
	// Updates reports whether the adapter is an Updater.
	Updates() bool
	// Decode decodes what Read printed for dir as the read of uid — whom
	// the reader ran as, never what the data says of itself — checked to
	// be that dir's, bounded (statedir.Decode). It needs no table: it runs
	// as soon as a reader's output is in, while the table is still read.
	Decode(wire []byte, dir string, uid uint32) Decoded
}

// Declared is a client a policy declares rather than one compiled in
// (client/declared): a reader child is told it by its Spec, plain data,
// and makes it again from that.
type Declared interface {
	Client
	Spec() []byte
}

// Decoded is one dir's read, decoded: judging it needs the table.
type Decoded interface {
	// Judge is the adapter's Judge of the read — or, when Decode found it
	// wrong, those problems — with every claim in it spoken by the read's
	// uid, whatever the adapter set.
	Judge(snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string)
	// Wire is the decoded read as Read would print it: the same bytes when
	// the trip through JSON lost nothing (the contract suite checks it).
	Wire() []byte
	// Merge is this read, a ReadChanged of names, with prev's other
	// records (Updater.Merge); itself when either read was found wrong or
	// the adapter is no Updater.
	Merge(prev Decoded, names []string) Decoded
	// Unsettled is the adapter's Unsettled of this read (Updater), nil
	// for none.
	Unsettled() []string
	// Sound reports whether Decode found nothing that ends the judging
	// (the dir missing, read as another uid's): a read another can be
	// merged into.
	Sound() bool
}

// New erases a to a Client. P is *R (inferred: client.New[Raw](Adapter{})).
func New[R any, P interface {
	*R
	Raw
}](a Adapter[R]) Client {
	return port[R, P]{a}
}

// port is an Adapter[R] behind the Client seam.
type port[R any, P interface {
	*R
	Raw
}] struct {
	Adapter[R]
}

// Read implements Client: the adapter's read, marshalled. A read is plain
// data; were it not, "null" fails its Decode, which is that uid's doubt.
func (p port[R, P]) Read(dir string) []byte {
	b, err := json.Marshal(p.Adapter.Read(dir))
	if err != nil {
		return []byte("null")
	}
	return b
}

// ReadChanged implements Client.
func (p port[R, P]) ReadChanged(dir string, names []string) []byte {
	u, ok := p.Adapter.(Updater[R])
	if !ok {
		return p.Read(dir)
	}
	b, err := json.Marshal(u.ReadChanged(dir, names))
	if err != nil {
		return []byte("null")
	}
	return b
}

// Updates implements Client.
func (p port[R, P]) Updates() bool {
	_, ok := p.Adapter.(Updater[R])
	return ok
}

// Decode implements Client.
func (p port[R, P]) Decode(wire []byte, dir string, uid uint32) Decoded {
	r := new(R)
	errs := statedir.Decode(wire, r, P(r).StateHead(), dir, uid, p.Info().Title)
	return &decoded[R, P]{a: p.Adapter, r: r, uid: uid, errs: errs}
}

// decoded is one read of an Adapter[R].
type decoded[R any, P interface {
	*R
	Raw
}] struct {
	a    Adapter[R]
	r    *R
	uid  uint32
	errs []error
}

// Judge implements Decoded.
func (d *decoded[R, P]) Judge(snap *platform.Snapshot) (scan.Evidence, []error, []string) {
	if d.errs != nil {
		return scan.Evidence{}, d.errs, P(d.r).Warnings()
	}
	ev, problems, warnings := d.a.Judge(d.r, d.uid, snap)
	Speak(&ev, d.uid)
	return ev, problems, warnings
}

// Wire implements Decoded.
func (d *decoded[R, P]) Wire() []byte {
	b, err := json.Marshal(d.r)
	if err != nil {
		return nil
	}
	return b
}

// Merge implements Decoded.
func (d *decoded[R, P]) Merge(prev Decoded, names []string) Decoded {
	u, ok := d.a.(Updater[R])
	old, same := prev.(*decoded[R, P])
	if !ok || !same || d.errs != nil || old.errs != nil || old.uid != d.uid {
		return d
	}
	return &decoded[R, P]{a: d.a, r: u.Merge(old.r, d.r, names, d.uid), uid: d.uid}
}

// Sound implements Decoded.
func (d *decoded[R, P]) Sound() bool { return d.errs == nil }

// Unsettled implements Decoded.
func (d *decoded[R, P]) Unsettled() []string {
	u, ok := d.a.(Updater[R])
	if !ok || d.errs != nil {
		return nil
	}
	return u.Unsettled(d.r)
}

// Speak makes uid the speaker of every claim in ev: what a user's state
// dir says is that user's word (scan's speaker gate takes it from here).
func Speak(ev *scan.Evidence, uid uint32) {
	for _, l := range ev.Ledgers {
		l.Speaker = uid
	}
	for i := range ev.Ties {
		ev.Ties[i].Speaker = uid
	}
	for i := range ev.Servers {
		ev.Servers[i].UID = uid
	}
	for i := range ev.Sessions {
		ev.Sessions[i].Speaker = uid
	}
}

// Set is the clients a run knows: cmd hands down client/all's, and every
// package below receives it as a value — none reaches for a list — so a
// test can run with a chosen set.
type Set struct{ list []Client }

// NewSet is a set of the clients given, in that order.
func NewSet(cs ...Client) Set { return Set{list: cs} }

// All returns the clients, in the set's order.
func (s Set) All() []Client { return s.list }

// Titles are the set's clients as people call them, in its order.
func (s Set) Titles() []string {
	var out []string
	for _, c := range s.list {
		out = append(out, c.Info().Title)
	}
	return out
}

// Homes are the state dirs the set's clients keep in a home, in its
// order, each once (Info.Homes).
func (s Set) Homes() []string {
	var out []string
	for _, c := range s.list {
		for _, h := range c.Info().Homes {
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// ByName returns the client called name, or nil.
func (s Set) ByName(name string) Client {
	for _, c := range s.list {
		if c.Info().Name == name {
			return c
		}
	}
	return nil
}

// Marks are every client's marks, merged (scan.Marks.Add), for
// scan.Config.
func (s Set) Marks() scan.Marks {
	var m scan.Marks
	for _, c := range s.list {
		in := c.Info()
		m.Add(in.AllMarks())
	}
	return m
}

// EnvNames are every client's marker variables.
func (s Set) EnvNames() []string {
	var out []string
	for _, c := range s.list {
		out = append(out, c.Info().EnvNames...)
	}
	return out
}

// Owners are the owner names every client's evidence uses, for a policy
// rule's owner matcher.
func (s Set) Owners() []string {
	var out []string
	for _, c := range s.list {
		out = append(out, c.Info().Owners...)
	}
	return out
}

// Names are the clients' names, in order.
func (s Set) Names() []string {
	var out []string
	for _, c := range s.list {
		out = append(out, c.Info().Name)
	}
	return out
}

// Own reports whether p is one of the client's own processes: titled as
// one (Comms), titled with a version and run from one of VersionDirs, or
// node running its Script (only then is its command line read).
func (in *Info) Own(s *platform.Snapshot, p *platform.Process) bool {
	m := in.ClientMark()
	return m.Own(s, p)
}

// AllMarks are the client's marks with the one that recognises its own
// processes (ClientMark), where it has such a process (Comms, Script).
func (in *Info) AllMarks() scan.Marks {
	m := in.Marks
	if len(in.Comms) > 0 || in.Script != nil {
		m.Clients = append(slices.Clip(m.Clients), in.ClientMark())
	}
	return m
}

// ClientMark is how scan recognises the client's own processes, under
// the client's first owner name (its own name when it has none).
func (in *Info) ClientMark() scan.ClientMark {
	owner := in.Name
	if len(in.Owners) > 0 {
		owner = in.Owners[0]
	}
	return scan.ClientMark{Owner: owner, Comms: in.Comms, VersionDirs: in.VersionDirs, Script: in.Script}
}

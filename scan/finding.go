package scan

import (
	"regexp"
	"slices"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Reason is why a tree is a finding (README, "How it decides").
type Reason string

// The reasons a tree is a finding.
const (
	// Reparented: the root's parent is PID 1, a systemd --user manager or a
	// named subreaper — its real parent died.
	Reparented Reason = "reparented"
	// OwnerDead: the root is attributed to an owner that is no longer alive.
	OwnerDead Reason = "owner-dead"
	// RunDone: a ledger run marked done whose process still lives.
	RunDone Reason = "run-done"
	// SessionEnded: the run's ledger session (or an ancestor) was reset or closed.
	SessionEnded Reason = "session-ended"
	// Untracked: nothing attributes the root to any owner, live or dead.
	Untracked Reason = "untracked"
	// Abandoned: the root's stdin is a pipe or a socket no process can
	// write to any more (the kernel says so): a stdio server that can
	// never be spoken to again.
	Abandoned Reason = "abandoned"
	// Superseded: a live client started a newer copy of this server in its
	// place and never stopped this one, as its own record says (a client's
	// log of its servers' starts and stops, an edited entry reconnected).
	Superseded Reason = "superseded"
)

// Reasons lists every reason, for validation.
var Reasons = []Reason{Reparented, OwnerDead, RunDone, SessionEnded, Untracked, Abandoned, Superseded}

// Owner says how to recognise a supervisor (a gateway) and what it leaves on
// the processes it spawns.
type Owner struct {
	Name string
	// Cmdline matches the owner's argv, joined with spaces.
	Cmdline *regexp.Regexp
	// PIDEnv names an environment variable the owner puts on its children
	// holding its own pid (a policy's [[owner]] pid_env).
	PIDEnv string
	// Cgroup matches the cgroup path of the owner's service unit; children
	// stay in it after they are reparented.
	Cgroup *regexp.Regexp
}

// Config is what scan needs from the policy.
type Config struct {
	Owners []Owner
	// Subreapers match processes, besides PID 1 and systemd --user managers,
	// that adopt orphans (PR_SET_CHILD_SUBREAPER).
	Subreapers []Subreaper
	// Marks are the clients' conventions (package client): kinds and
	// supervisors.
	Marks Marks
	// Apps are the MSIX apps whose containers' leftovers are looked for
	// (ApplyContainers).
	Apps []App
}

// OwnerIndex returns the index in Owners of the first owner whose command
// line pattern matches cmd, or -1. It is the one place an owner is
// recognised by its command line: the scan, and the reaper's checks of
// processes that appear after the scan, both ask it.
func (c *Config) OwnerIndex(cmd string) int {
	for k, o := range c.Owners {
		if o.Cmdline != nil && o.Cmdline.MatchString(cmd) {
			return k
		}
	}
	return -1
}

// Subreaper recognises a process that adopts orphans.
type Subreaper struct {
	// Comm, if set, must match the process's comm before Cmdline is tried.
	Comm    *regexp.Regexp
	Cmdline *regexp.Regexp
}

// Finding is a tree whose root has one or more reasons and is not inside a
// live owner's tree. Whether anything is done about it is the policy's call.
type Finding struct {
	Root    *platform.Process
	Members []Member // the root first, then its descendants in pre-order
	Kind    Kind
	Reasons []Reason
	// Evidence says, in words, what each reason rests on.
	Evidence []string
	// Owner is the owner the tree is attributed to, live or dead; empty when
	// nothing attributes it.
	Owner    string
	OwnerPID int
	// RunID is the ledger run the tree was found through, if any, and Run
	// that run.
	RunID string
	Run   *ledger.Run
	RSS   uint64 // total resident memory of the members
	// Speakers are the uids whose word attributes the tree or proves its
	// reasons: the owner of the state (ledger, lock, lease, session or pid
	// file) a run or tie came from, or the root's own uid for a marker in
	// its environment or its unit cgroup. A user's state speaks only for
	// that user's processes and root's for anyone's, so a rule may reach
	// the users the evidence speaks for (policy: user = ["@evidence"]).
	Speakers []uint32
	// RootSpeaks: a kernel fact about the root's own process proves a
	// reason (abandoned), which speaks for the root's user. (Its uid is
	// read when a rule asks, not for every finding.)
	RootSpeaks bool
	// Apart are processes below the root that are not the tree's, each
	// with everything below it: a live owner's running run that leads a
	// session of its own (a daemon the tree started and setsid made its
	// own, as a client's CLI starts a managed daemon its records
	// verify). They are not members; the reap neither signals nor follows
	// them, and does not count them as escaped.
	Apart []*platform.Process
	// Supervisor names a client's supervisor process at the root (a
	// SupervisorMark's role), when there is one: it
	// kills what it tracks within seconds of losing its owner, so the
	// reaper lets it finish before acting (reap.Options.SettleWait).
	Supervisor string
}

// Member is one process of a finding's tree.
type Member struct {
	Proc  *platform.Process
	Depth int // 0 for the root
}

// PIDs returns the pids of the tree, root first.
func (f *Finding) PIDs() []int {
	pids := make([]int, len(f.Members))
	for i, m := range f.Members {
		pids[i] = m.Proc.PID
	}
	return pids
}

// Has reports whether f has reason r.
func (f *Finding) Has(r Reason) bool {
	for _, x := range f.Reasons {
		if x == r {
			return true
		}
	}
	return false
}

// Zombie is a defunct process, listed with the parent that should reap it.
type Zombie struct {
	Proc   *platform.Process
	Parent *platform.Process // nil when the parent is not visible
}

// Unknown is a process whose parent the snapshot cannot see (hidepid, or a
// parent in another PID namespace). It is never treated as an orphan.
type Unknown struct {
	Proc *platform.Process
}

// spoken records that uid's word attributes f or proves its reasons.
func (f *Finding) spoken(uid uint32) {
	if uid != platform.NoUID && !slices.Contains(f.Speakers, uid) {
		f.Speakers = append(f.Speakers, uid)
	}
}

// SpokenFor reports whether the evidence behind f speaks for a process of
// uid: its own state or markers, root's, which speaks for anyone, or a
// kernel fact about the root's own process (RootSpeaks), which speaks
// for the root's user — read from s only when asked.
func (f *Finding) SpokenFor(s *platform.Snapshot, uid uint32) bool {
	return slices.Contains(f.Speakers, uid) || slices.Contains(f.Speakers, 0) ||
		f.RootSpeaks && uid != platform.NoUID && uid == s.UID(f.Root)
}

package declared

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Spec is a declared client's session files, as a policy says them
// (policy.SessionFiles), with the client's name: plain data, which is how
// a reader child is told the client.
type Spec struct {
	Name string `json:"name"`
	// Dir is below the home; Pattern names the files in it.
	Dir     string `json:"dir"`
	Pattern string `json:"pattern"`
	// PID is the key of the client's pid; PIDFromName takes the number
	// the file's name begins with instead.
	PID         string `json:"pid,omitempty"`
	PIDFromName bool   `json:"pidFromName,omitempty"`
	// Started is the key of when the session's process started.
	Started string `json:"started,omitempty"`
	// ID is the key of the session's id, which the client puts on what it
	// spawns as Env.
	ID  string `json:"id"`
	Env string `json:"env"`
}

// Specs are the declared clients of pol that keep session files.
func Specs(pol *policy.Policy) []Spec {
	var out []Spec
	for _, c := range pol.Clients {
		if s := c.Sessions; s != nil {
			out = append(out, Spec{Name: c.Name, Dir: s.Dir, Pattern: s.Pattern, PID: s.PID, PIDFromName: s.PIDFromName,
				Started: s.Started, ID: s.ID, Env: s.Env})
		}
	}
	return out
}

// Clients are the declared clients of pol with session files, as clients.
func Clients(pol *policy.Policy) []client.Client {
	var out []client.Client
	for _, s := range Specs(pol) {
		out = append(out, New(s))
	}
	return out
}

// New is the client spec declares.
func New(spec Spec) client.Client { return declaredClient{client.New[Raw](Adapter{spec}), spec} }

// FromSpec makes a client again from what its Spec method printed: a
// reader child's. What a policy's loader would refuse is refused.
func FromSpec(b []byte) (client.Client, error) {
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("declared client: %w", err)
	}
	check := policy.SessionFiles{}
	switch {
	case s.Name == "" || s.ID == "" || s.Env == "":
		return nil, fmt.Errorf("declared client %q: no name, id or env", s.Name)
	case check.SetFiles("~/"+s.Dir+"/"+s.Pattern) != "":
		return nil, fmt.Errorf("declared client %q: bad files %s/%s", s.Name, s.Dir, s.Pattern)
	}
	return New(s), nil
}

// declaredClient is a declared client on the seam, with its spec for a
// reader child (client.Declared).
type declaredClient struct {
	client.Client
	spec Spec
}

// Spec implements client.Declared.
func (c declaredClient) Spec() []byte {
	b, _ := json.Marshal(c.spec) // strings and a bool: it cannot fail
	return b
}

// Adapter is a declared client's adapter.
type Adapter struct{ Spec Spec }

var _ client.Adapter[Raw] = Adapter{}

// Info: its name, the variable its session id is in; its marks are the
// policy's (policy.Policy's [[client]] marks), not repeated here.
func (a Adapter) Info() client.Info {
	return client.Info{Name: a.Spec.Name, Title: a.Spec.Name + " (declared)", Homes: []string{"~/" + a.Spec.Dir}, EnvNames: []string{a.Spec.Env},
		Owners: []string{a.Spec.Name}, Announce: []string{"."}}
}

// HomeDirs lists the session dir below home when it is the account's.
func (a Adapter) HomeDirs(home string, uid int) []string {
	return statedir.HomeDir(home, a.Spec.Dir, uid)
}

// OwnDirs: none beyond the home's.
func (Adapter) OwnDirs(func(string) string) []string { return nil }

// NamedDir: no variable names a declared client's dir.
func (Adapter) NamedDir(func(string) (string, bool)) (string, string) { return "", "" }

// IsStateDir reports whether dir ends in the session dir's path.
func (a Adapter) IsStateDir(dir string) bool {
	dir = filepath.Clean(dir)
	rel := filepath.FromSlash(a.Spec.Dir)
	if len(dir) <= len(rel) || dir[len(dir)-len(rel)-1] != filepath.Separator || dir[len(dir)-len(rel):] != rel {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// Judge ties, for each session, the trees that carry its id to its
// process (Session.owner); an id that two files give different processes
// ties nothing, and says so.
func (a Adapter) Judge(raw *Raw, uid uint32, snap *platform.Snapshot) (scan.Evidence, []error, []string) {
	var ev scan.Evidence
	warnings := raw.Warnings()
	count := map[string]int{}
	for _, s := range raw.Sessions {
		count[s.ID]++
	}
	for _, s := range raw.Sessions {
		if count[s.ID] > 1 {
			warnings = append(warnings, fmt.Sprintf("%s: session %s is in %d files: it ties nothing", s.File, s.ID, count[s.ID]))
			count[s.ID] = 0 // said once
			continue
		}
		if count[s.ID] == 0 {
			continue
		}
		where := a.Spec.Name + " session " + s.ID
		owner := s.owner(a.Spec.Name, snap)
		ev.Ties = append(ev.Ties, scan.Tie{Env: a.Spec.Env, Value: s.ID, Strong: a.Spec.Env,
			Owner: owner, Speaker: uid, Where: where, Proof: "the session file " + s.File, Noun: a.Spec.Name})
		ev.Sessions = append(ev.Sessions, scan.Session{Owner: owner, ID: s.ID, Proof: "the session file " + s.File, Speaker: uid})
	}
	return ev, raw.Errors(), warnings
}

// owner is the process a session names: its pid, and — when the file
// says when it started — pinned to the process that started then: gone
// when the session started before this boot, or when the pid is a process
// that started after the session did.
func (s *Session) owner(name string, snap *platform.Snapshot) ledger.Owner {
	o := ledger.Owner{Name: name, PID: s.PID}
	if snap == nil || s.Started == 0 {
		return o
	}
	started := time.UnixMilli(s.Started)
	at := started.UTC().Format(time.RFC3339)
	if boot := snap.Taken.Add(-snap.Uptime); started.Before(boot.Add(-time.Second)) {
		o.Gone = fmt.Sprintf("%s session %s, pid %d, started %s, before this boot", name, s.ID, s.PID, at)
		return o
	}
	q := snap.Get(s.PID)
	if q == nil || q.Zombie() {
		return o // OwnerGone says which
	}
	// A second for the rounding of the clocks: the session's start is
	// written by its process, after it started.
	if began := snap.Started(q); began.After(started.Add(time.Second)) {
		o.Gone = fmt.Sprintf("pid %d is another process now: it started %s, after the session it names (%s)", s.PID, began.UTC().Format(time.RFC3339), at)
		return o
	}
	o.Start = snap.Identity(q)
	return o
}

// pidOf reads a pid from a session file's value: a number or a string of
// digits.
func pidOf(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		if x >= 2 && x < 1<<31 && x == float64(int(x)) {
			return int(x), true
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 2 && strconv.Itoa(n) == x {
			return n, true
		}
	}
	return 0, false
}

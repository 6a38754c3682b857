package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
)

// A kill loop: a supervisor that respawns what is ended — a live
// app-server that starts its servers again, a [[subreaper]] that runs its
// child in a loop — makes every pass end a fresh copy, for ever (users of
// another tool met 472 kills and 501 respawns under one live parent). A
// copy that comes back from the same live parent, with the same command,
// right after reaper ended the last is a respawn; after maxRespawns of
// them in a row reaper stops ending it, names the parent, and advises
// restarting it — whatever the policy says. A leftover of the same
// command that appears later (another session's) is no respawn: it is
// reaped as any other.
const (
	// maxRespawns is how many times in a row a tree may come back before
	// reaper leaves it alone.
	maxRespawns = 3
	// respawnWithin is how soon after reaper ended the last copy a new
	// one must have started to count as its respawn.
	respawnWithin = 5 * time.Second
	// respawnKeep is how long a kill is remembered, and maxRespawnKeys
	// how many parent and command pairs.
	respawnKeep    = time.Hour
	maxRespawnKeys = 512
	maxRespawnFile = 1 << 20
)

// respawnKill is the last time reaper ended a tree of one command under
// one live parent, and how many of those were respawns in a row.
type respawnKill struct {
	// Parent is the parent's start identity (Snapshot.Identity) and pid,
	// Name its command, for the advice.
	Parent string `json:"parent"`
	PID    int    `json:"pid"`
	Name   string `json:"name"`
	// From and Until bound the reap that ended it: a respawn started
	// between From and Until+respawnWithin.
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Streak counts the kills in a row whose tree was a respawn of the
	// one before (the first kill is 1).
	Streak int `json:"streak"`
}

// respawns are the kills remembered, keyed by parent identity and a hash
// of the command.
type respawns map[string]*respawnKill

// loadRespawns reads the kills remembered at path (none when it cannot:
// the file is the reaper's own, and a lost one costs only a few more
// cycles), forgetting those older than respawnKeep.
func loadRespawns(path string, now time.Time) respawns {
	r := respawns{}
	b, err := platform.ReadOwn(path, maxRespawnFile)
	if err != nil || json.Unmarshal(b, &r) != nil {
		return respawns{}
	}
	for k, v := range r {
		if v == nil || now.Sub(v.Until) > respawnKeep {
			delete(r, k)
		}
	}
	return r
}

// respawnKey is the key of a tree rooted at root: its live parent (pid
// and start: two processes may start in the same tick) and its command. "" when the parent is gone or is init (which
// respawns nothing of a user's; what it adopted is a leftover).
func respawnKey(s *platform.Snapshot, root *platform.Process) (string, *platform.Process) {
	parent := s.Get(root.PPID)
	if parent == nil || parent.Zombie() || root.PPID <= 1 {
		return "", nil
	}
	sum := sha256.Sum256([]byte(s.CommandLine(root)))
	return fmt.Sprintf("%d %s %s", parent.PID, s.Identity(parent), hex.EncodeToString(sum[:12])), parent
}

// refuse refuses every planned item whose tree is the maxRespawns-th
// respawn in a row (or later) of one reaper ended: the parent is named,
// and restarting it is the advice.
func (r respawns) refuse(plan *policy.Plan, s *platform.Snapshot) {
	for i := range plan.Items {
		it := &plan.Items[i]
		if it.Outcome != policy.Planned {
			continue
		}
		key, parent := respawnKey(s, it.Finding.Root)
		k := r[key]
		if k == nil || k.Streak < maxRespawns || !respawned(s.Started(it.Finding.Root), k) {
			continue
		}
		it.Outcome = policy.Refused
		it.Detail = fmt.Sprintf("a kill loop: its parent pid %d (%s) started it again %d times right after reaper ended it — reaper stops here, whatever the policy says; restart pid %d (%s), or stop it from spawning %.120q",
			parent.PID, audit.Printable(parent.Comm), k.Streak, parent.PID, audit.Printable(parent.Comm), audit.CommandLine(s, it.Finding.Root))
	}
}

// respawned reports whether a tree that started at start is a respawn of
// the one k ended.
func respawned(start time.Time, k *respawnKill) bool {
	return !start.Before(k.From.Add(-time.Second)) && !start.After(k.Until.Add(respawnWithin))
}

// record remembers the trees this reap ended under a live parent, from
// when it began acting (from) to when it was done (until), and saves
// what is remembered at path: an error when what is there is not the
// reaper's own (platform.WriteOwn), which is left as it is.
func (r respawns) record(path string, plan *policy.Plan, results []reap.Result, s *platform.Snapshot, from, until time.Time) error {
	changed := false
	for i := range plan.Items {
		if i >= len(results) || results[i].Outcome != policy.Killed && results[i].Outcome != policy.Gone {
			continue
		}
		root := plan.Items[i].Finding.Root
		key, parent := respawnKey(s, root)
		if key == "" {
			continue
		}
		streak := 1
		if k := r[key]; k != nil && respawned(s.Started(root), k) {
			streak = k.Streak + 1
		}
		r[key] = &respawnKill{Parent: s.Identity(parent), PID: parent.PID, Name: parent.Comm, From: from, Until: until, Streak: streak}
		changed = true
	}
	if !changed {
		return nil
	}
	if len(r) > maxRespawnKeys {
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return r[keys[i]].Until.After(r[keys[j]].Until) })
		for _, k := range keys[maxRespawnKeys:] {
			delete(r, k)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return platform.WriteOwn(path, b, 0o600)
}

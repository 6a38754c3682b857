package audit

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
)

// Seen remembers the report-only findings that a previous reap recorded,
// so that one a timer meets every minute is recorded when first seen and
// again only when it changes, not on every run: a finding that the policy
// only reports would otherwise add a journal entry and an audit line per
// run, day after day.
//
// A finding is known by its root's pid and start time, which no other
// process shares before a reboot, and it has changed when its rule,
// action, outcome, kind or reasons have. What a run does not meet again
// is forgotten, so the file holds at most one entry per live finding.
// Findings the reap signalled, refused or failed are always recorded.
type Seen struct {
	path string
	prev map[string]string
	next map[string]string
}

// maxSeenBytes bounds what LoadSeen reads: far more than the entries of
// every finding a host could hold, and a file that is not the reaper's
// own is not trusted beyond it.
const maxSeenBytes = 4 << 20

// LoadSeen reads the seen state at path. A missing, unreadable or corrupt
// file, or one that is not the reaper's own (platform.OpenOwn), is an empty state: the worst it costs is one repeated record per
// finding.
func LoadSeen(path string) *Seen {
	s := &Seen{path: path, prev: map[string]string{}, next: map[string]string{}}
	if path == "" {
		return s // nowhere to remember: every report-only finding is new
	}
	data, err := platform.ReadOwn(path, maxSeenBytes)
	if err != nil {
		return s
	}
	var m map[string]string
	if json.Unmarshal(data, &m) == nil && m != nil {
		s.prev = m
	}
	return s
}

// Filter returns r with only the findings worth recording this run: every
// one that was acted on, and a report-only one when it is new or changed.
// It remembers the report-only ones for Save.
func (s *Seen) Filter(r *Report) *Report {
	out := *r
	out.Findings = nil
	for _, f := range r.Findings {
		if f.Outcome != policy.Reported {
			out.Findings = append(out.Findings, f)
			continue
		}
		key := strconv.Itoa(f.RootPID) + "@" + f.Start
		val := strings.Join([]string{f.Rule, f.Action, string(f.Outcome), f.Kind, strings.Join(f.Reasons, ",")}, "|")
		s.next[key] = val
		if s.prev[key] != val {
			out.Findings = append(out.Findings, f)
		}
	}
	return &out
}

// Save writes what Filter remembered, replacing the file atomically
// (mode 0600: the findings name other users' processes). Its directory is
// the lock's, which the reap has made by then.
func (s *Seen) Save() error {
	if s.path == "" {
		return nil
	}
	data, err := json.Marshal(s.next)
	if err != nil {
		return err
	}
	return platform.WriteOwn(s.path, data, 0o600)
}

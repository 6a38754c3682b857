package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
)

// Headroom is one user's processes against the limits fork(2) meets:
// RLIMIT_NPROC (Linux: the user's tasks, threads included, against the
// soft limit of the process that forks; macOS: kern.maxprocperuid), and
// the tightest pids controller limit over their newest process's cgroup
// (a systemd user slice's TasksMax). At either, fork fails with EAGAIN:
// "forkpty: Resource temporarily unavailable".
type Headroom struct {
	UID  int64  `json:"uid"`
	User string `json:"user"`
	// Processes is the user's processes, Tasks those and their threads,
	// zombies included (each counts one until reaped), by the owner of
	// each process's /proc entry.
	Processes int `json:"processes"`
	Tasks     int `json:"tasks"`
	// ProcessLimit is RLIMIT_NPROC's soft limit, the lowest of the
	// user's newest processes' (0: unlimited or unread).
	ProcessLimit uint64 `json:"process_limit"`
	PIDsMax      uint64 `json:"pids_max,omitempty"`
	PIDsCurrent  uint64 `json:"pids_current,omitempty"`
	PIDsCgroup   string `json:"pids_cgroup,omitempty"`
	// Percent is the fuller of the two, in percent of its limit; Warn is
	// set at HeadroomWarnAt or more.
	Percent int  `json:"percent"`
	Warn    bool `json:"warn"`
}

// HeadroomWarnAt is the share of a limit, in percent, past which a user
// is warned.
const HeadroomWarnAt = 80

// limitSample is how many of a user's newest processes' RLIMIT_NPROC are
// read: the limit is per process, set at login and inherited, and the
// newest are the ones forking now.
const limitSample = 3

// ReadHeadroom is the headroom of each user with processes in s that mine
// accepts, root aside (fork does not check root's count), the fullest
// first. It reads each user's newest processes' limits and cgroup: a few
// files a user, whatever the table's size.
func ReadHeadroom(s *platform.Snapshot, mine func(uid uint32) bool) []Headroom {
	type user struct {
		procs, tasks int
		newest       []*platform.Process
	}
	users := map[uint32]*user{}
	s.Owners()
	for i := range s.Procs {
		p := &s.Procs[i]
		if p.KernelThread() {
			continue
		}
		owner := countedAs(s, p)
		if owner == 0 || owner == platform.NoUID || !mine(owner) {
			continue
		}
		u := users[owner]
		if u == nil {
			u = &user{}
			users[owner] = u
		}
		u.procs++
		u.tasks += max(int(p.Threads), 1)
		if !p.Zombie() {
			u.newest = newestOf(u.newest, p)
		}
	}
	out := []Headroom{}
	for uid, u := range users {
		h := Headroom{UID: int64(uid), User: policy.UserName(uid), Processes: u.procs, Tasks: u.tasks}
		for _, p := range u.newest {
			if l := s.ProcessLimit(p); l > 0 && (h.ProcessLimit == 0 || l < h.ProcessLimit) {
				h.ProcessLimit = l
			}
		}
		// The tightest pids.max over the sampled processes' cgroups, not
		// the newest's alone: which process is newest must not decide
		// whether the user is warned (issue 64).
		for _, p := range u.newest {
			limit, cur, cg := s.PIDsLimit(p)
			if limit > 0 && (h.PIDsMax == 0 || cur*h.PIDsMax > h.PIDsCurrent*limit) {
				h.PIDsMax, h.PIDsCurrent, h.PIDsCgroup = limit, cur, cg
			}
		}
		if h.ProcessLimit > 0 {
			h.Percent = int(uint64(h.Tasks) * 100 / h.ProcessLimit)
		}
		if h.PIDsMax > 0 {
			h.Percent = max(h.Percent, int(h.PIDsCurrent*100/h.PIDsMax))
		}
		h.Warn = h.Percent >= HeadroomWarnAt
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Percent != out[j].Percent {
			return out[i].Percent > out[j].Percent
		}
		return out[i].UID < out[j].UID
	})
	return out
}

// newestOf keeps the limitSample newest processes, the newest first.
func newestOf(kept []*platform.Process, p *platform.Process) []*platform.Process {
	at := sort.Search(len(kept), func(i int) bool { return kept[i].StartTicks < p.StartTicks })
	if at >= limitSample {
		return kept
	}
	kept = append(kept, nil)
	copy(kept[at+1:], kept[at:])
	kept[at] = p
	return kept[:min(len(kept), limitSample)]
}

// Warning is h in words when it is past HeadroomWarnAt, else "".
func (h Headroom) Warning() string {
	if !h.Warn {
		return ""
	}
	return fmt.Sprintf("%s is at %d%% of a process limit: %s; at it, fork fails (\"Resource temporarily unavailable\")",
		h.Who(), h.Percent, h.Limits())
}

// Who is the user in words: name and uid, or the uid alone where no
// account names it.
func (h Headroom) Who() string {
	if h.User == "" {
		return fmt.Sprintf("uid %d", h.UID)
	}
	return fmt.Sprintf("user %s (uid %d)", Printable(h.User), h.UID)
}

// Limits says the count against each limit that is set.
func (h Headroom) Limits() string {
	var parts []string
	if h.ProcessLimit > 0 {
		parts = append(parts, fmt.Sprintf("%d tasks of RLIMIT_NPROC %d", h.Tasks, h.ProcessLimit))
	}
	if h.PIDsMax > 0 {
		parts = append(parts, fmt.Sprintf("%d tasks of pids.max %d in %s", h.PIDsCurrent, h.PIDsMax, Printable(h.PIDsCgroup)))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%s, no limit set", Plural(h.Processes, "process"))
	}
	return fmt.Sprintf("%s; ", Plural(h.Processes, "process")) + strings.Join(parts, ", ")
}

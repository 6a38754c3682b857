package doctor

import (
	"fmt"
	"strings"

	"github.com/orphanreaper/reaper/audit"
)

// CheckInfo is a check's name and what it looks at: Checks is the list
// `reaper doctor --help` prints, in the order Diagnose runs them (some
// are one platform's, or root's alone); TestChecksListed holds Diagnose
// to it.
type CheckInfo struct{ Name, What string }

// Checks are every check doctor may run, in order.
var Checks = []CheckInfo{
	{"process table", "how many processes, in which PID namespace, read how fast"},
	{"headroom", "each user's processes and threads against their process limits (RLIMIT_NPROC; macOS kern.maxprocperuid; their cgroup's pids.max): a warning past 80%, where fork starts to fail"},
	{"pidfd", "whether signals can go through pidfds (Linux 5.3+)"},
	{"watch", "whether reaper watch can see owners exit (pidfd, kqueue, process handles) and state dirs change"},
	{"cgroup v2", "whether a dying tree can be killed as a unit (root, a writable cgroup v2 with cgroup.kill): it makes and removes an empty cgroup under /reaper.confine to find out, and names any confinement a reaper that died left"},
	{"privileges", "root's capabilities, or what a user's reaper can reach"},
	{"windows", "on Windows, what stands there for pidfds, cgroups and signals (process handles, job objects), said once"},
	{"policy", "the policy in force — the one the timer's command line names, else the default file, else the embedded one — and what its rules do"},
	{"state dirs", "the agent clients' state dirs found, each read as its owner, and which could not be"},
	{"findings", "what a reap would do now (as reap --dry-run plans it)"},
	{"lock", "the one-reaper-at-a-time lock, and who holds it"},
	{"timer", "what runs reaper on its own: reaper-watch.service when it is enabled or running (its status line, its restarts), else reaper.timer (systemd) or the launchd job: enabled, and how its last run ended; on Windows, this user's logon task"},
	{"hooks", "the session-start hooks reaper installed in this user's clients' settings, and whether the binary each runs is there"},
	{"service binary", "as root, whether the binary the installed service runs could be replaced by another user"},
	{"records", "the audit log and metrics file the timer writes"},
	{"journal", "whether journald takes reap's records"},
}

// ChecksHelp lists the checks for doctor's help: each name, and what it
// looks at wrapped beside it.
func ChecksHelp() string {
	var b strings.Builder
	for _, c := range Checks {
		for k, line := range audit.Wrap(c.What, 58) {
			name := ""
			if k == 0 {
				name = c.Name
			}
			fmt.Fprintf(&b, "  %-15s%s\n", name, line)
		}
	}
	return b.String()
}

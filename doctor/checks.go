package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"
)

// policyCheck loads the policy in force and says what it does; nil and a
// failed check when it is invalid.
func policyCheck(cfg Config, file, from string) (*policy.Policy, audit.Check) {
	c := audit.Check{Name: "policy", Status: audit.CheckOK}
	pol, err := run.LoadPolicy(file, cfg.Clients)
	if err != nil {
		c.Status = audit.CheckFail
		c.Summary = "invalid: nothing would be signalled (reap exits 78)"
		c.Details = strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
		c.Fix = "correct it; 'reaper policy check FILE' says what is wrong, with file and line"
		return nil, c
	}
	acts := map[policy.Action]int{}
	for _, r := range pol.Rules {
		acts[r.Action]++
	}
	what := fmt.Sprintf("%s: %s", audit.Plural(len(pol.Rules), "rule"), actionCounts(acts))
	switch {
	case pol.Source == policy.DefaultSource:
		c.Status = audit.CheckInfo
		c.Summary = "the embedded default: it knows the agent clients, and only reports"
		c.Fix = fmt.Sprintf("'reaper init' shows what the shipped example policy would do here and writes it to %s (or write your own: 'reaper policy show --example')", policyText())
	case file != "":
		c.Summary = fmt.Sprintf("%s (%s), %s", pol.Source, from, what)
	default:
		c.Summary = fmt.Sprintf("%s, %s", pol.Source, what)
	}
	c.Details = append(c.Details, fmt.Sprintf("defaults: grace %s, min_age %s, at most %s a run",
		audit.HumanAge(pol.Defaults.Grace), audit.HumanAge(pol.Defaults.MinAge), audit.Plural(pol.Defaults.MaxActions, "action")))
	if len(pol.Warnings) > 0 {
		c.Status = audit.CheckWarn
		c.Details = append(c.Details, pol.Warnings...)
	}
	return pol, c
}

// actionCounts is "2 terminate, 1 report", the strongest action first.
func actionCounts(acts map[policy.Action]int) string {
	var parts []string
	for _, a := range slices.Backward(policy.Actions) {
		if n := acts[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, a))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// tableCheck says what the scan read.
func tableCheck(t *run.Table, took time.Duration) audit.Check {
	s := t.Snap
	c := audit.Check{Name: "process table", Status: audit.CheckOK,
		Summary: fmt.Sprintf("%s, read and scanned in %s", audit.Plural(len(s.Procs), "process"), took.Round(time.Millisecond))}
	if !host.HostPIDNamespace() {
		c.Status = audit.CheckWarn
		c.Details = append(c.Details, "this is not the host's PID namespace (a container, or unshare --pid): processes outside it are not seen, so only the trees inside it are judged")
		c.Fix = "run reaper on the host, or in the container whose leftovers it is to reap"
	} else if runtime.GOOS == "linux" {
		c.Details = append(c.Details, "the host's PID namespace")
	}
	for i, w := range s.Warnings {
		if i == 3 {
			c.Details = append(c.Details, fmt.Sprintf("and %d more warnings ('reaper scan' lists them)", len(s.Warnings)-3))
			break
		}
		c.Details = append(c.Details, w)
	}
	return c
}

// headroomCheck is each user's processes against their process limits
// (audit.ReadHeadroom): as root every user's, else the doctor's own; a
// warning at audit.HeadroomWarnAt percent or more.
func headroomCheck(t *run.Table, uid uint32) audit.Check {
	hs := audit.ReadHeadroom(t.Snap, func(u uint32) bool { return uid == 0 || u == uid })
	c := audit.Check{Name: "headroom", Status: audit.CheckOK}
	warned := 0
	for i, h := range hs {
		if h.Warn {
			warned++
			c.Details = append(c.Details, h.Warning())
		} else if i < 3 {
			c.Details = append(c.Details, fmt.Sprintf("%s: %d%%, %s", h.Who(), h.Percent, h.Limits()))
		}
	}
	switch {
	case warned > 0:
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%s at %d%% or more of a process limit", audit.Plural(warned, "user"), audit.HeadroomWarnAt)
		c.Fix = "find what forks (reaper ps; reaper watch names a fork storm as it happens), or raise the limit: ulimit -u, LimitNPROC=, or TasksMax= of the user's slice"
	case len(hs) == 0 && uid == 0:
		c.Summary = "no user but root runs processes (root's count meets no process limit)"
	case len(hs) == 0:
		c.Summary = "no process of yours was seen"
	default:
		c.Summary = fmt.Sprintf("every user below %d%% of their process limits (RLIMIT_NPROC, pids.max)", audit.HeadroomWarnAt)
	}
	return c
}

// stateDirsCheck lists the clients' state dirs the scan read, each as its
// owner, and those that could not be read; where none was found, the
// dirs the clients (homes: their Info.Homes) keep in a home.
func stateDirsCheck(dirs []gather.DirRead, uid uint32, homes []string) audit.Check {
	c := audit.Check{Name: "state dirs", Status: audit.CheckOK}
	if len(dirs) == 0 {
		c.Status = audit.CheckInfo
		c.Summary = "no agent client's state dir found: findings rest on the process table alone"
		where := "in any home"
		if uid != 0 {
			where = "in this user's home (a user's reaper reads no other)"
		}
		c.Details = []string{"looked for " + strings.Join(homes, ", ") + " " + where + ", and the dirs live clients name"}
		return c
	}
	sort.SliceStable(dirs, func(i, j int) bool { return dirs[i].UID < dirs[j].UID })
	users := map[uint32]bool{}
	var failed []string
	skipped := 0
	for _, r := range dirs {
		users[r.UID] = true
		line := fmt.Sprintf("%s %s of %s: read", r.Client, r.Path, policy.UserText(r.UID))
		switch {
		case r.Skipped != "":
			line = fmt.Sprintf("%s %s of %s: %s", r.Client, r.Path, policy.UserText(r.UID), r.Skipped)
			skipped++
		case r.Err != "":
			line = fmt.Sprintf("%s %s of %s: %s", r.Client, r.Path, policy.UserText(r.UID), r.Err)
			failed = append(failed, policy.UserText(r.UID))
		}
		c.Details = append(c.Details, line)
	}
	c.Summary = fmt.Sprintf("%s of %s, each read as its owner", audit.Plural(len(dirs), "state dir"), audit.Plural(len(users), "user"))
	if skipped > 0 {
		c.Summary += fmt.Sprintf("; %d not read, their users owning no process", skipped)
	}
	if len(failed) > 0 {
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("%d of %s could not be read: the trees of %s are held back (never signalled) while so",
			len(failed), audit.Plural(len(dirs), "state dir"), strings.Join(slices.Compact(failed), ", "))
		c.Fix = "the detail says what went wrong; a state dir its owner cannot read (a file of another owner, a broken database) is that user's to repair"
	}
	return c
}

// findingsCheck says what a reap would do now, as reap --dry-run plans
// it: a warning when a rule would act but is refused for something other
// than by design (another user's tree, doubt).
func findingsCheck(plan *policy.Plan, embedded bool) audit.Check {
	c := audit.Check{Name: "findings", Status: audit.CheckOK}
	var planned, reported, deferred, refused, protected int
	var firstRefusal string
	for _, it := range plan.Items {
		switch {
		case it.Outcome == policy.Planned:
			planned++
		case it.Outcome == policy.Protected:
			protected++
		case it.Outcome == policy.Refused && it.Benign:
			deferred++
		case it.Outcome == policy.Refused:
			refused++
			if firstRefusal == "" {
				firstRefusal = fmt.Sprintf("tree %d (rule %q): %s", it.Finding.Root.PID, it.Rule.Name, it.Detail)
			}
		default:
			reported++
		}
	}
	if len(plan.Items) == 0 {
		c.Summary = "no finding now"
	} else {
		c.Summary = fmt.Sprintf("%s now: %d to signal, %d to report, %d deferred, %d protected, %d refused",
			audit.Plural(len(plan.Items), "finding"), planned, reported, deferred, protected, refused)
	}
	if embedded {
		c.Details = append(c.Details, "planned with the embedded default policy, since the policy in force is invalid")
	}
	if plan.Unmatched > 0 {
		c.Details = append(c.Details, fmt.Sprintf("%s no rule matches ('reaper scan --all' lists them)", audit.Plural(plan.Unmatched, "orphaned tree")))
	}
	if refused > 0 {
		c.Status = audit.CheckWarn
		c.Details = append(c.Details, "first refused: "+firstRefusal)
		c.Fix = "'reaper reap --dry-run' shows each refusal and its fix; 'reaper explain PID' tells one tree's story"
	}
	return c
}

// lockCheck looks at the lock without taking it: whether it is there,
// whose it is, and which process holds it.
func lockCheck(path string) audit.Check {
	c := audit.Check{Name: "lock", Status: audit.CheckOK}
	holder, cmd, err := platform.LockState(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// reap makes the file, and its directory: the nearest directory
		// that exists must be writable.
		dir := filepath.Dir(path)
		var fi os.FileInfo
		for {
			if fi, err = os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
				break
			}
			dir = filepath.Dir(dir)
		}
		if err == nil && !fi.IsDir() {
			err = fmt.Errorf("not a directory")
		} else if err == nil {
			err = platform.Writable(dir)
		}
		if err != nil {
			c.Status = audit.CheckFail
			c.Summary = fmt.Sprintf("%s cannot be made: %s is not writable (%v), so reap cannot take its lock", path, dir, err)
			c.Fix = "pass --lock-file in a directory this user can write (its $XDG_RUNTIME_DIR is one)"
			return c
		}
		c.Summary = path + " is not there yet: the first reap makes it"
		return c
	case err != nil:
		c.Status = audit.CheckFail
		c.Summary = fmt.Sprintf("lock: %v", err)
		c.Fix = "reap refuses it: remove what is at that path, or pass --lock-file in a directory only this user can write"
		return c
	}
	if holder > 0 {
		c.Summary = fmt.Sprintf("%s is held by pid %d (%s): a reap is running now", path, holder, audit.Printable(cmd))
		return c
	}
	c.Summary = path + " is free"
	return c
}

// recordsCheck looks at the audit log and metrics file the timer's
// command line names.
func recordsCheck(argv []string, timer audit.Check, now time.Time) audit.Check {
	c := audit.Check{Name: "records", Status: audit.CheckOK}
	auditLog, metrics := flagValue(argv, "audit-log"), flagValue(argv, "metrics")
	if len(argv) == 0 {
		c.Status = audit.CheckInfo
		c.Summary = "no timer's command line to read: what a reap run by hand records is what its flags say"
		return c
	}
	var parts []string
	if auditLog == "" {
		parts = append(parts, "no audit log (--audit-log)")
	} else if fi, err := os.Stat(auditLog); err != nil {
		c.Status = audit.CheckWarn
		parts = append(parts, "audit log not written yet")
		c.Details = append(c.Details, fmt.Sprintf("%s: %v", auditLog, errors.Unwrap(err)))
	} else {
		parts = append(parts, "audit log "+audit.HumanBytes(uint64(fi.Size())))
		c.Details = append(c.Details, fmt.Sprintf("%s: %s, last written %s ago ('reaper history' reads it)", auditLog, audit.HumanBytes(uint64(fi.Size())), audit.HumanAge(now.Sub(fi.ModTime()))))
		if runtime.GOOS == "linux" {
			if _, err := os.Stat("/etc/logrotate.d/reaper"); err == nil {
				c.Details = append(c.Details, "rotated by /etc/logrotate.d/reaper")
			} else {
				c.Status = audit.CheckWarn
				c.Details = append(c.Details, "no /etc/logrotate.d/reaper: nothing rotates it")
				c.Fix = "install the package's logrotate file (packaging/logrotate/reaper in a release archive) as /etc/logrotate.d/reaper"
			}
		}
	}
	if metrics == "" {
		parts = append(parts, "no metrics (--metrics)")
	} else if fi, err := os.Stat(metrics); err != nil {
		c.Status = audit.CheckWarn
		parts = append(parts, "metrics not written yet")
		c.Details = append(c.Details, fmt.Sprintf("%s: %v", metrics, errors.Unwrap(err)))
	} else {
		age := now.Sub(fi.ModTime())
		parts = append(parts, "metrics written "+audit.HumanAge(age)+" ago")
		c.Details = append(c.Details, fmt.Sprintf("%s: written %s ago", metrics, audit.HumanAge(age)))
		if age > 5*time.Minute && timer.Status == audit.CheckOK {
			c.Status = audit.CheckWarn
			c.Details = append(c.Details, "older than 5 minutes, though the timer runs every minute: the ReaperNotRunning alert fires")
			c.Fix = joinFix(c.Fix, "the timer's last runs ended before writing them: see its journal")
		}
	}
	c.Summary = strings.Join(parts, "; ")
	return c
}

// serviceBinaryCheck judges the binary a root service runs (argv[0] of its
// command line): one that a user other than root could replace — the
// file, or a directory above it, a user's or writable by others — is
// that user's way to root at the service's next start.
func serviceBinaryCheck(argv []string) audit.Check {
	c := audit.Check{Name: "service binary", Status: audit.CheckOK}
	exe := argv[0]
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	why, err := platform.WhoCanReplace(exe)
	switch {
	case err != nil:
		c.Status = audit.CheckWarn
		c.Summary = fmt.Sprintf("the service runs %s as root, which could not be checked: %v", argv[0], err)
		c.Fix = "'sudo reaper service install' from a root-owned copy (its --help says how) writes a unit for a binary that is there"
	case why != "":
		c.Status = audit.CheckFail
		c.Summary = fmt.Sprintf("the service runs %s as root, and a user other than root could replace it: %s", exe, why)
		c.Fix = fmt.Sprintf("'sudo install -m 0755 %s /usr/local/bin/reaper', then 'sudo /usr/local/bin/reaper service install' (or --binary with another root-owned copy)", exe)
	default:
		c.Summary = fmt.Sprintf("the service runs %s as root, and only root can replace it", exe)
	}
	return c
}

// policyText is where this user's policy is read when none is named, as
// a person types it.
func policyText() string {
	p := paths.Current()
	return p.Text(p.Policy)
}

package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Claude Code's background agents (`claude --bg`, 2.1.3xx; read from the
// 2.1.331 binary and run here offline). A daemon, `claude daemon run`,
// its own session leader, runs each job as a pty host
// (`claude bg-pty-host --bg-pty-host <run>/spare/<id>.pty.sock … --
// claude --bg-spare <run>/spare/<id>.claim.sock`) whose child, the job's
// claude (`claude bg-spare …`), runs the job's servers and writes the
// session file of any claude. The daemon keeps one warm spare pair
// ahead, claims it for the next job and spawns another. <run> is
// /tmp/cc-daemon-<uid>/<hash>. Its records, in the config dir:
//
//   - daemon.lock: the live daemon, {pid, procStart, version, startedAt}.
//   - daemon/roster.json: {supervisorPid, workers: {<short>: {pid,
//     procStart, replPid, replProcStart, sessionId, cwd, ptySock, …}}}:
//     each running job's pty host and claude. A job outlives a SIGKILLed
//     daemon (its host is reparented) and the next daemon adopts it from
//     the roster ("fromRoster").
//   - daemon.log: "[<time>] [bg] bg spare spawned host pid=N",
//     "bg claimed-spare <short> (<source>)", "bg settled <short> (<how>)",
//     "[supervisor] ─── daemon start ─── version=V pid=N …",
//     "bg: control socket bound at <run>/control.sock".
//
// What they prove (judgeDaemon):
//   - a roster job whose host lives at its pid and start is a live
//     background session: its host and claude are owned, wherever they
//     are in the tree (a job whose daemon was killed is still the user's);
//   - a pty host or claude of this daemon's <run>/spare/ that no roster
//     job claims and that is not the live daemon's own child was left by
//     a daemon that is gone (the next daemon reaps such spares itself,
//     "bg orphan-spare reap"; one that never starts leaves them, as a
//     spare busy-looping for days did, anthropics/claude-code #61800):
//     owner-dead;
//   - a job the log says settled whose host, the spare the log says it
//     claimed, still runs under the live daemon past settledHold, with no
//     roster entry, is work the daemon left behind under itself
//     (#77649): superseded, with the log's lines as proof;
//   - a daemon of this config dir older than the lock's live one, holding
//     no roster job, was left by a self-restart (#1935): superseded under
//     the live daemon, its spares in its tree. A host whose parent is any
//     live daemon is that daemon's: never said left by a dead one.
//
// A job the daemon spawned with no warm spare ("bg spawned <short>") names
// no host in the log: its leftovers under a live daemon are not found.

const (
	// What is read of the daemon's files: the lock and the roster whole
	// (the daemon refuses a roster over 8 MiB; reaper reads at most
	// ledger.MaxSize), the log's last daemonLogTail bytes, its last
	// maxDaemonEvents events, at most maxWorkers jobs.
	daemonLogTail   = 256 << 10
	maxDaemonEvents = 512
	maxWorkers      = 256
	// settledHold is how long a job must be settled before what still
	// runs of it is left behind: the daemon ends a settled job's host
	// within a second here.
	settledHold = time.Minute
)

// Daemon is what the background-agent daemon's files say.
type Daemon struct {
	LockFile   string        `json:"lockFile,omitempty"`
	Lock       *DaemonLock   `json:"lock,omitempty"`
	RosterFile string        `json:"rosterFile,omitempty"`
	Workers    []Worker      `json:"workers,omitempty"`
	LogFile    string        `json:"logFile,omitempty"`
	Events     []DaemonEvent `json:"events,omitempty"`
	// Run is the daemon's runtime dir, from the log's control socket
	// line or a roster job's sockets.
	Run string `json:"run,omitempty"`
	// Partial: the lock or the roster is there but was not read whole
	// (another owner's, unreadable, not JSON, a job refused): what it
	// would have held is not known, so nothing is said gone.
	Partial bool `json:"partial,omitempty"`
}

// DaemonLock is daemon.lock: the daemon that holds it.
type DaemonLock struct {
	PID       int    `json:"pid"`
	ProcStart string `json:"procStart"`
	Version   string `json:"version,omitempty"`
	StartedAt int64  `json:"startedAt,omitempty"`
}

// Worker is one roster job.
type Worker struct {
	Short         string `json:"short"`
	PID           int    `json:"pid"`
	ProcStart     string `json:"procStart"`
	ReplPID       int    `json:"replPid,omitempty"`
	ReplProcStart string `json:"replProcStart,omitempty"`
	SessionID     string `json:"sessionId,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	PtySock       string `json:"ptySock,omitempty"`
}

// DaemonEvent is one line of the log that says something of a host: What
// is "start" (PID the daemon's), "spawned" (PID the spare's host),
// "claimed" or "settled" (Short the job's; How how it settled).
type DaemonEvent struct {
	At    int64  `json:"at"` // ms since the epoch
	What  string `json:"what"`
	PID   int    `json:"pid,omitempty"`
	Short string `json:"short,omitempty"`
	How   string `json:"how,omitempty"`
}

// readDaemon reads the daemon's files in the config dir, when there are.
func (raw *Raw) readDaemon(sd statedir.Dir) {
	d := &Daemon{}
	problem := func(err error) { raw.Problem(err); d.Partial = true }
	if b, there := raw.readOptional(sd, "daemon.lock"); there {
		d.LockFile = filepath.Join(sd.Path, "daemon.lock")
		var l DaemonLock
		if b == nil {
			d.Partial = true
		} else if err := json.Unmarshal(b, &l); err != nil || l.PID <= 0 || statedir.CheckID("procStart", l.ProcStart) != "" {
			problem(&ledger.Error{File: d.LockFile, Msg: "not Claude Code's daemon lock: want a pid and its procStart"})
		} else {
			d.Lock = &l
		}
	}
	rel := filepath.Join("daemon", "roster.json")
	if b, there := raw.readOptional(sd, rel); there {
		d.RosterFile = filepath.Join(sd.Path, rel)
		var r struct {
			Workers map[string]Worker `json:"workers"`
		}
		if b == nil {
			d.Partial = true
		} else if err := json.Unmarshal(b, &r); err != nil {
			problem(&ledger.Error{File: d.RosterFile, Line: statedir.JSONErrLine(b, err), Msg: "not Claude Code's daemon roster: " + statedir.JSONProblem(err)})
		} else if len(r.Workers) > maxWorkers {
			problem(&ledger.Error{File: d.RosterFile, Msg: fmt.Sprintf("more than %d jobs: none read", maxWorkers)})
		} else {
			for short, w := range r.Workers {
				w.Short = short
				if why := w.check(); why != "" {
					problem(&ledger.Error{File: d.RosterFile, Msg: fmt.Sprintf("job %q: %s", statedir.KeyName(short), why)})
					continue
				}
				d.Workers = append(d.Workers, w)
			}
		}
	}
	d.LogFile = filepath.Join(sd.Path, "daemon.log")
	d.Events, d.Run = readDaemonLog(sd, "daemon.log")
	if d.Events == nil {
		d.LogFile = ""
	}
	if d.Run == "" {
		for _, w := range d.Workers {
			if run, ok := runOfSock(w.PtySock); ok {
				d.Run = run
				break
			}
		}
	}
	if d.Lock != nil || d.Workers != nil || d.Events != nil || d.Partial {
		raw.Daemon = d
	}
}

// readOptional reads rel below the dir: whether it is there, and what it
// holds (nil when it could not be read: said as the read's problem, or
// skipped as another owner's).
func (raw *Raw) readOptional(sd statedir.Dir, rel string) ([]byte, bool) {
	b, err := sd.Read(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		raw.ReadError(filepath.Join(sd.Path, rel), err)
		return nil, true
	}
	return b, true
}

// check says why w is not a roster job, or "".
func (w *Worker) check() string {
	if w.PID <= 0 || w.ProcStart == "" {
		return "want a pid and its procStart"
	}
	for _, f := range []struct{ name, v string }{{"short", w.Short}, {"procStart", w.ProcStart}, {"replProcStart", w.ReplProcStart}, {"sessionId", w.SessionID}} {
		if why := statedir.CheckID(f.name, f.v); why != "" {
			return why
		}
	}
	if len(w.Cwd) > 4096 || len(w.PtySock) > 4096 {
		return "a path longer than 4096 bytes"
	}
	return ""
}

// parseLogLine reads one daemon.log line, "[<RFC 3339 time>] [<part>]
// <text>", into an event; run is the runtime dir a control socket line
// names. Plain string matching: up to 256 KiB of lines are read a pass.
func parseLogLine(line string) (e DaemonEvent, run string, ok bool) {
	if len(line) < 30 || line[0] != '[' {
		return e, "", false
	}
	end := strings.Index(line, "] [")
	if end < 0 || end > 40 {
		return e, "", false
	}
	at, err := time.Parse(time.RFC3339Nano, line[1:end])
	if err != nil {
		return e, "", false
	}
	rest := line[end+3:]
	part := strings.Index(rest, "] ")
	if part < 0 || part > 16 {
		return e, "", false
	}
	text := rest[part+2:]
	e.At = at.UnixMilli()
	switch {
	case strings.HasPrefix(text, "bg spare spawned host pid="):
		e.What, e.PID = "spawned", pidOf(text[len("bg spare spawned host pid="):])
		return e, "", e.PID > 0
	case strings.HasPrefix(text, "bg claimed-spare "):
		short, _, _ := strings.Cut(text[len("bg claimed-spare "):], " (")
		e.What, e.Short = "claimed", short
		return e, "", isShort(short)
	case strings.HasPrefix(text, "bg settled "):
		short, how, _ := strings.Cut(text[len("bg settled "):], " (")
		how, _, _ = strings.Cut(how, ")")
		e.What, e.Short, e.How = "settled", short, how
		return e, "", isShort(short) && isShort(how)
	case strings.HasPrefix(text, "bg: control socket bound at "):
		dir, found := strings.CutSuffix(strings.TrimRight(text[len("bg: control socket bound at "):], "\r"), "/control.sock")
		return e, dir, found && runDir().MatchString(dir)
	case strings.Contains(text, "daemon start ───"):
		_, after, found := strings.Cut(text, " pid=")
		e.What, e.PID = "start", pidOf(after)
		return e, "", found && e.PID > 0
	}
	return e, "", false
}

// pidOf reads the pid that s begins with.
func pidOf(s string) int {
	n := 0
	for i := 0; i < len(s) && i < 10 && '0' <= s[i] && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// isShort reports whether s is a job's short id or a word of the log:
// lowercase letters and digits, at most 64.
func isShort(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('a' <= s[i] && s[i] <= 'z' || '0' <= s[i] && s[i] <= '9') {
			return false
		}
	}
	return true
}

// readDaemonLog reads the last daemonLogTail bytes of the log: its last
// maxDaemonEvents events, and the runtime dir its last control socket line
// names.
func readDaemonLog(sd statedir.Dir, rel string) ([]DaemonEvent, string) {
	events, run := []DaemonEvent{}, ""
	read := eachTailLine(sd.Path, rel, sd.Owner, daemonLogTail, func(line []byte) {
		e, dir, ok := parseLogLine(string(line))
		switch {
		case !ok:
		case e.What == "":
			run = dir
		default:
			events = append(events, e)
		}
	})
	if read < 0 {
		return nil, ""
	}
	if len(events) > maxDaemonEvents {
		events = events[len(events)-maxDaemonEvents:]
	}
	return events, run
}

// runDir matches a daemon's runtime dir: /tmp/cc-daemon-<uid>/<hash>
// (any temp dir).
var runDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/\S*/cc-daemon-([0-9]{1,10})/[0-9a-f]{4,64}$`) })

// runOfSock is the runtime dir of a spare's socket, <run>/spare/<id>.….
func runOfSock(sock string) (string, bool) {
	spare := filepath.Dir(sock)
	if filepath.Base(spare) != "spare" {
		return "", false
	}
	run := filepath.Dir(spare)
	return run, runDir().MatchString(run)
}

// check says why d does not hold together as one daemon's records of
// uid's, or "" (Judge trusts no reader).
func (d *Daemon) check(uid uint32) string {
	if len(d.Workers) > maxWorkers || len(d.Events) > maxDaemonEvents {
		return "past its bounds"
	}
	for i := range d.Workers {
		if why := d.Workers[i].check(); why != "" {
			return why
		}
	}
	for _, e := range d.Events {
		if why := statedir.CheckID("short", e.Short+e.How); why != "" {
			return why
		}
	}
	if d.Run != "" {
		m := runDir().FindStringSubmatch(d.Run)
		if m == nil || m[1] != strconv.FormatUint(uint64(uid), 10) {
			return fmt.Sprintf("runtime dir %q is not cc-daemon-%d's", d.Run, uid)
		}
	}
	return ""
}

// host is a process of a daemon's: a pty host or a job's claude, with the
// socket its argv names below <run>/spare/.
type host struct {
	p    *platform.Process
	sock string
	pty  bool // a pty host, not the claude it runs
}

// hostOf says whether p is a pty host or job claude of the daemon whose
// runtime dir is run.
func hostOf(snap *platform.Snapshot, p *platform.Process, run string) (host, bool) {
	argv := snap.Cmdline(p)
	for i := 0; i+1 < len(argv); i++ {
		if (argv[i] == "--bg-pty-host" || argv[i] == "--bg-spare") && strings.HasPrefix(argv[i+1], run+"/spare/") {
			return host{p: p, sock: argv[i+1], pty: argv[i] == "--bg-pty-host"}, true
		}
		if argv[i] == "--" {
			break // what the pty host runs, not what it is
		}
	}
	return host{}, false
}

// judgeDaemon turns the daemon's records into evidence spoken by uid.
func judgeDaemon(d *Daemon, uid uint32, snap *platform.Snapshot) (scan.Evidence, []error) {
	if d == nil || snap == nil {
		return scan.Evidence{}, nil
	}
	if why := d.check(uid); why != "" {
		return scan.Evidence{}, []error{fmt.Errorf("%s: not Claude Code's daemon records: %s", d.RosterFile, why)}
	}
	// Whether the records' starts can be checked here: procStart is in
	// clock ticks since boot (Linux). Where they cannot (macOS, or a
	// start that is not a number), a job is held by its pid alone and
	// nothing is said gone: a daemon that cannot be shown gone may live.
	j := &daemonJudge{d: d, uid: uid, snap: snap, verified: !d.Partial, owner: ledger.Owner{Name: OwnerName},
		claimed: map[int]bool{}, claimedSock: map[string]bool{}}
	j.lock()
	j.roster()
	if !j.verified {
		return j.ev, nil
	}
	if j.daemon != nil {
		if l := olderGenerations(d, uid, j.daemon, j.claimed, snap); l != nil {
			j.ev.Ledgers = append(j.ev.Ledgers, l)
		}
	}
	if d.Run != "" {
		j.spares()
	}
	return j.ev, nil
}

// daemonJudge is one judging of a daemon's records, one method per record
// it reads: the lock (the live daemon), the roster (its jobs), the hosts
// no job claims (spares, against the log).
type daemonJudge struct {
	d        *Daemon
	uid      uint32
	snap     *platform.Snapshot
	verified bool // every start could be checked here
	// daemon is the live daemon (the lock's pid at its start, uid's), and
	// owner the lock's owner record.
	daemon *platform.Process
	owner  ledger.Owner
	// claimed are the roster's live jobs' pids and sockets.
	claimed     map[int]bool
	claimedSock map[string]bool
	ev          scan.Evidence
}

// identity is a record's procStart as a start identity; "" where it
// cannot be checked here.
func (j *daemonJudge) identity(procStart string) string {
	ticks, err := strconv.ParseUint(strings.TrimSpace(procStart), 10, 64)
	if err != nil || j.snap.BootID == "" || j.snap.WallClockStarts() {
		return ""
	}
	return platform.FormatIdentity(j.snap.BootID, ticks)
}

// lock finds the live daemon the daemon.lock names.
func (j *daemonJudge) lock() {
	l := j.d.Lock
	if l == nil {
		return
	}
	j.owner.PID, j.owner.Start = l.PID, j.identity(l.ProcStart)
	j.verified = j.verified && j.owner.Start != ""
	if gone, _ := scan.OwnerGone(j.snap, scan.RecordedBy(j.uid, l.PID, j.owner.Start)); !gone && j.verified {
		j.daemon = j.snap.Get(l.PID)
	}
}

// roster claims the roster's live jobs: each owns its host and claude.
func (j *daemonJudge) roster() {
	for _, w := range j.d.Workers {
		start := j.identity(w.ProcStart)
		if start == "" {
			// Not checkable: its pids and socket are held all the same.
			j.verified = false
			j.claimed[w.PID], j.claimedSock[w.PtySock] = true, true
			if w.ReplPID > 0 {
				j.claimed[w.ReplPID] = true
			}
			continue
		}
		if gone, _ := scan.OwnerGone(j.snap, scan.RecordedBy(j.uid, w.PID, start)); gone {
			continue
		}
		owner := ledger.Owner{Name: OwnerName, PID: w.PID, Start: start}
		runs := []ledger.Run{{ID: "Claude Code background job " + w.Short, Kind: ledger.KindACP, PID: w.PID, Start: start, State: ledger.RunRunning}}
		j.claimed[w.PID], j.claimedSock[w.PtySock] = true, true
		if rs := j.identity(w.ReplProcStart); w.ReplPID > 0 && rs != "" {
			runs = append(runs, ledger.Run{ID: "Claude Code background job " + w.Short + "'s claude", Kind: ledger.KindACP, PID: w.ReplPID, Start: rs, State: ledger.RunRunning})
			j.claimed[w.ReplPID] = true
		}
		j.ev.Ledgers = append(j.ev.Ledgers, &ledger.Ledger{Version: ledger.Version, Source: j.d.RosterFile, Speaker: j.uid, Owner: owner, Runs: runs})
		j.ev.Sessions = append(j.ev.Sessions, scan.Session{Owner: owner, ID: w.SessionID, Dir: w.Cwd, Kind: "bg job " + w.Short,
			Proof: "Claude Code's daemon roster " + j.d.RosterFile, Speaker: j.uid})
	}
}

// unclaimed are the daemon's hosts in the table that no job claims: uid's,
// alive. Each leads a session of its own (the daemon spawns them
// detached), so only session leaders' command lines are read. byPID holds
// every host, claimed or not.
func (j *daemonJudge) unclaimed() (hosts []host, byPID map[int]host) {
	byPID = map[int]host{}
	for i := range j.snap.Procs {
		p := &j.snap.Procs[i]
		if p.SID != p.PID || p.Zombie() || j.snap.UID(p) != j.uid {
			continue
		}
		if h, ok := hostOf(j.snap, p, j.d.Run); ok {
			byPID[p.PID] = h
			if !j.claimed[p.PID] && !j.claimed[p.PPID] && !j.claimedSock[h.sock] {
				hosts = append(hosts, h)
			}
		}
	}
	return hosts, byPID
}

// spares judges the hosts no job claims: the live daemon's spare a job
// settled (the log), a live daemon's own, or one no live daemon keeps —
// gone, with the daemon that spawned it.
func (j *daemonJudge) spares() {
	d, snap := j.d, j.snap
	hosts, byPID := j.unclaimed()
	var gone, settled []ledger.Run
	for _, h := range hosts {
		if _, parent := byPID[h.p.PPID]; parent {
			continue // its pty host's tree holds it
		}
		if j.daemon != nil && h.p.PPID == j.daemon.PID {
			if r, ok := settledRun(d, h, j.daemon, snap); ok {
				settled = append(settled, r)
			}
			continue // the live daemon's own: its spare, or a job starting
		}
		if q := snap.Get(h.p.PPID); q != nil && !q.Zombie() && isDaemon(snap, q) {
			continue // a daemon's that lives: an older generation's goes with it
		}
		what := "job claude"
		if h.pty {
			what = "pty host"
		}
		gone = append(gone, ledger.Run{ID: fmt.Sprintf("Claude Code background %s %s", what, filepath.Base(h.sock)), Kind: ledger.KindACP,
			PID: h.p.PID, Start: snap.Identity(h.p), State: ledger.RunRunning,
			Proof: fmt.Sprintf("a background daemon's %s of %s/spare that no job in the roster %s claims; %s; cpu %s", what, d.Run, d.RosterFile, j.noDaemon(), cpuOf(snap, h.p))})
	}
	if len(gone) > 0 {
		owner := j.owner
		owner.Gone = "the Claude Code background daemon that spawned them is not the live one (a daemon that starts ends such spares itself: \"bg orphan-spare reap\")"
		src := d.LockFile
		if src == "" {
			src = d.RosterFile
		}
		j.ev.Ledgers = append(j.ev.Ledgers, &ledger.Ledger{Version: ledger.Version, Source: src, Speaker: j.uid, Owner: owner, Runs: gone})
	}
	if len(settled) > 0 {
		j.ev.Ledgers = append(j.ev.Ledgers, &ledger.Ledger{Version: ledger.Version, Source: d.LogFile, Speaker: j.uid, Owner: j.owner, Runs: settled})
	}
}

// noDaemon says why a spare's daemon is not the live one.
func (j *daemonJudge) noDaemon() string {
	switch {
	case j.d.Lock == nil:
		return "no daemon.lock names a live daemon"
	case j.daemon == nil:
		return fmt.Sprintf("the daemon.lock's daemon (pid %d) is gone", j.d.Lock.PID)
	}
	return fmt.Sprintf("the daemon.lock's daemon (pid %d) is not its parent", j.d.Lock.PID)
}

// settledRun is h, a pty host under the live daemon, as a job the log says
// settled: the spare the daemon spawned at h's pid — h started within the
// line's bounds — is the one the next claim took (the daemon keeps one
// warm spare and claims the last it spawned), and that job settled
// settledHold ago or more.
func settledRun(d *Daemon, h host, daemon *platform.Process, snap *platform.Snapshot) (ledger.Run, bool) {
	if !h.pty {
		return ledger.Run{}, false
	}
	// The events of the live daemon: after its start line.
	events := d.Events
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].What == "start" {
			if events[i].PID != daemon.PID {
				return ledger.Run{}, false
			}
			events = events[i+1:]
			break
		}
	}
	spawn, short := -1, ""
	unclaimed := -1 // the last spare spawned and not yet claimed
	for i, e := range events {
		switch e.What {
		case "spawned":
			unclaimed = i
		case "claimed":
			if unclaimed >= 0 && events[unclaimed].PID == h.p.PID {
				spawn, short = unclaimed, e.Short
			}
			unclaimed = -1
		}
	}
	if spawn < 0 {
		return ledger.Run{}, false
	}
	at := time.UnixMilli(events[spawn].At)
	if st := snap.Started(h.p); st.Before(at.Add(-startAfter)) || st.After(at.Add(startBefore)) {
		return ledger.Run{}, false // another process at the pid
	}
	for _, w := range d.Workers {
		if w.Short == short {
			return ledger.Run{}, false // the roster still lists it
		}
	}
	for _, e := range events[spawn:] {
		if e.What != "settled" || e.Short != short {
			continue
		}
		done := time.UnixMilli(e.At)
		if snap.Taken.Sub(done) < settledHold {
			return ledger.Run{}, false
		}
		return ledger.Run{ID: "Claude Code background job " + short, Kind: ledger.KindACP, PID: h.p.PID, Start: snap.Identity(h.p), State: ledger.RunRunning,
			Superseded: fmt.Sprintf("settled: Claude Code's daemon (pid %d) logged \"bg settled %s (%s)\" at %s, and its pty host %d (\"bg spare spawned host pid=%d\" at %s, then \"bg claimed-spare %s\") still runs under it %s later; the roster %s no longer lists the job (daemon.log %s); cpu %s",
				daemon.PID, short, e.How, done.UTC().Format(time.TimeOnly), h.p.PID, h.p.PID, at.UTC().Format(time.TimeOnly), short,
				snap.Taken.Sub(done).Round(time.Second), d.RosterFile, d.LogFile, cpuOf(snap, h.p))}, true
	}
	return ledger.Run{}, false
}

// olderGenerations finds the daemons of this config dir that the live one
// replaced — each a session leader, as the daemon runs — (a self-restart for an upgrade that left the old one running:
// three live generations with no sessions, anthropics/claude-code #1935):
// a `claude daemon run` of uid's, started before the daemon.lock's live
// daemon, whose CLAUDE_CONFIG_DIR is this dir (or, unset, whose HOME's
// .claude is), with no roster job's host among its children. Superseded
// under the live daemon, with what says so.
func olderGenerations(d *Daemon, uid uint32, daemon *platform.Process, claimed map[int]bool, snap *platform.Snapshot) *ledger.Ledger {
	if d.LockFile == "" {
		return nil
	}
	dir := filepath.Dir(d.LockFile)
	holds := map[int]bool{} // the daemons a claimed host is a child of
	for pid := range claimed {
		if q := snap.Get(pid); q != nil {
			holds[q.PPID] = true
		}
	}
	var runs []ledger.Run
	for i := range snap.Procs {
		q := &snap.Procs[i]
		if q.SID != q.PID || q.PID == daemon.PID || q.Zombie() || snap.UID(q) != uid || q.StartTicks >= daemon.StartTicks || holds[q.PID] {
			continue
		}
		if !isDaemon(snap, q) {
			continue
		}
		cfg, set := snap.Getenv(q, EnvConfigDir)
		if !set {
			home, ok := snap.Getenv(q, "HOME")
			if !ok || home == "" {
				continue
			}
			cfg = filepath.Join(home, ".claude")
		}
		if filepath.Clean(cfg) != dir {
			continue
		}
		runs = append(runs, ledger.Run{ID: "Claude Code background daemon, an older generation", Kind: ledger.KindACP, PID: q.PID, Start: snap.Identity(q), State: ledger.RunRunning,
			Superseded: fmt.Sprintf("replaced by a newer generation: %s names pid %d, started %s, as the live daemon of %s; this one started %s and runs no job of the roster %s; cpu %s",
				d.LockFile, daemon.PID, snap.Started(daemon).UTC().Format(time.RFC3339), dir, snap.Started(q).UTC().Format(time.RFC3339), d.RosterFile, cpuOf(snap, q))})
	}
	if runs == nil {
		return nil
	}
	return &ledger.Ledger{Version: ledger.Version, Source: d.LockFile, Speaker: uid,
		Owner: ledger.Owner{Name: OwnerName, PID: daemon.PID, Start: snap.Identity(daemon)}, Runs: runs}
}

// isDaemon reports whether p is a `claude daemon run`.
func isDaemon(snap *platform.Snapshot, p *platform.Process) bool {
	argv := snap.Cmdline(p)
	return len(argv) >= 3 && filepath.Base(argv[0]) == "claude" && argv[1] == "daemon" && argv[2] == "run"
}

// cpuOf is the CPU time p has used, in words.
func cpuOf(snap *platform.Snapshot, p *platform.Process) string {
	ticks := max(snap.ClockTicks, 1)
	return (time.Duration(p.UTime+p.STime) * time.Second / time.Duration(ticks)).Round(10 * time.Millisecond).String()
}

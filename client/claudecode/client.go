package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// OwnerName is the owner Claude Code's evidence attributes findings to.
const OwnerName = "claude-code"

// The variables Claude Code sets on what it spawns (its MCP servers, its
// Bash tool) and the one that moves its config dir. EnvPID (2.1.3xx) is
// on what the Bash tool runs, not on the MCP servers: the pid of the
// claude whose tool call started it.
const (
	EnvMarker    = "CLAUDECODE"
	EnvSessionID = "CLAUDE_CODE_SESSION_ID"
	EnvConfigDir = "CLAUDE_CONFIG_DIR"
	EnvPID       = "CLAUDE_PID"
)

// Adapter is Claude Code's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var (
	_ client.Adapter[Raw] = Adapter{}
	_ client.Updater[Raw] = Adapter{}
)

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[Raw](Adapter{})

// Info: a claude process names its config dir wherever it runs; its
// markers and the owner name its evidence uses.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Claude Code", RemoteServer: "`claude mcp add --transport http NAME URL`", Homes: []string{"~/.claude"}, Announce: []string{"sessions"}, EnvNames: []string{EnvMarker, EnvSessionID, EnvConfigDir, EnvPID},
		Owners: []string{OwnerName}, Marks: marks, Comms: []string{"claude"}, VersionDirs: []string{"/claude/versions/"},
		Hook: &client.Hook{DirEnv: EnvConfigDir, Dir: "~/.claude", File: "settings.json", Event: "SessionStart", Matcher: "startup|resume", Timeout: 5, PickShell: true}}
}

// HomeDirs lists ~/.claude when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, ".claude", uid) }

// OwnDirs: CLAUDE_CONFIG_DIR in reaper's environment.
func (Adapter) OwnDirs(getenv func(string) string) []string {
	return []string{getenv(EnvConfigDir)}
}

// NamedDir: what claude spawns carries its CLAUDE_CONFIG_DIR when one is
// set.
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	dir, _ := env(EnvConfigDir)
	return dir, EnvConfigDir
}

// IsStateDir reports whether dir is a Claude Code config dir.
func (Adapter) IsStateDir(dir string) bool {
	for _, name := range []string{"sessions", ".claude.json", "settings.json", "shell-snapshots"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// bashTool matches the Bash tool's shell: Claude Code sources a snapshot of
// the user's shell, then evals the command
// (/bin/bash -c -l source ~/.claude/shell-snapshots/snapshot-bash-….sh && … eval '…').
var bashTool = scan.MustPattern(`/shell-snapshots/snapshot-[a-z]+-[^ ]*\.sh`)

// cli matches claude and its ACP adapters (claude-agent-acp, as
// @agentclientprotocol publishes it, and the older claude-code-acp): an
// agent CLI, kind acp.
var cli = scan.MustPattern(`claude-agent-acp|claude-code-acp|(^|/)claude( |$)`)

// marks: the Bash tool's shell is an exec, the CLI acp; what carries
// CLAUDE_PID is the job of that claude's tool call (the tool's shell, a
// session leader, ends within a second of `cmd &` and leaves its jobs
// leading nothing: their group and session are the dead shell's, which
// says nothing of claude); what carries CLAUDECODE is Claude Code's, by
// the process group it kept.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: bashTool, Kind: ledger.KindExec}, {Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	PIDs:     []scan.PIDMark{{Env: EnvPID, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvMarker, Owner: OwnerName}},
}

// Read reads one config dir, in the reader child as its owner.
func (Adapter) Read(dir string) *Raw { return ReadRaw(dir) }

// Judge turns a config dir's read into evidence spoken by uid: each
// session file a ledger whose owner and one run are its claude (a live
// claude is owned, whatever its place in the tree), and a tie from its
// session id to that claude; the config's servers.
func (Adapter) Judge(raw *Raw, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string) {
	ev.Servers = raw.ServersOf(uid)
	warnings = raw.Warnings()
	here := domain()
	var errs []error
	adv := &jobs{uid: uid, calls: checkedCalls(raw.Tools)}
	lives := map[string]live{}
	defer func() {
		if len(adv.sessions) > 0 {
			ev.Advisers = append(ev.Advisers, adv)
		}
	}()
	for _, s := range raw.Sessions {
		if why := s.check(); why != "" {
			errs = append(errs, fmt.Errorf("%s: not a Claude Code session file: %s", s.File, why))
			continue
		}
		if s.PIDDomain != "" && here != "" && s.PIDDomain != here {
			warnings = append(warnings, fmt.Sprintf("%s: pid %d is of pid namespace %s, not this one (%s): not used", s.File, s.PID, s.PIDDomain, here))
			continue
		}
		owner := s.owner(snap)
		adv.sessions = append(adv.sessions, s)
		ev.Sessions = append(ev.Sessions, scan.Session{Owner: owner, ID: s.SessionID, Dir: s.Cwd, Kind: s.Kind,
			Proof: "the session file " + s.File, Speaker: uid, Version: s.Version, Started: s.started()})
		if snap != nil && owner.Gone == "" && owner.Start != "" {
			if gone, _ := scan.OwnerGone(snap, scan.RecordedBy(uid, s.PID, owner.Start)); !gone {
				lives[s.SessionID] = live{s: s, owner: owner, proc: snap.Get(s.PID)}
			}
		}
		if l, ok := lives[s.SessionID]; ok && outputGone(snap, l.proc) {
			// Its own output goes nowhere (a `claude -p … | tool` whose
			// reader died): the session file does not make it owned, and
			// the scan says what the kernel says of it, if it is orphaned.
			warnings = append(warnings, fmt.Sprintf("%s: claude pid %d lives, but no process reads its output: not held as a live session's", s.File, s.PID))
		} else {
			ev.Ledgers = append(ev.Ledgers, &ledger.Ledger{Version: ledger.Version, Source: s.File, Speaker: uid, Owner: owner,
				Runs: []ledger.Run{{ID: "claude session " + s.SessionID, Kind: ledger.KindACP, PID: s.PID, Start: owner.Start, State: ledger.RunRunning}}})
		}
		ev.Ties = append(ev.Ties, scan.Tie{Env: EnvSessionID, Value: s.SessionID, Strong: EnvSessionID,
			Owner: owner, Speaker: uid, Where: "claude session " + s.SessionID, Proof: "the session file " + s.File, Noun: "claude"})
	}
	if snap != nil {
		ev.Ledgers = append(ev.Ledgers, supersededRuns(checkedMCP(raw.MCP), lives, uid, snap)...)
	}
	dev, derrs := judgeDaemon(raw.Daemon, uid, snap)
	ev.Ledgers, ev.Sessions = append(ev.Ledgers, dev.Ledgers...), append(ev.Sessions, dev.Sessions...)
	errs = append(errs, derrs...)
	return ev, append(raw.Errors(), errs...), warnings
}

// outputGone reports whether the kernel says no process can read p's
// stdout any more (platform.ReadStdout).
func outputGone(snap *platform.Snapshot, p *platform.Process) bool {
	if p == nil {
		return false
	}
	st, err := snap.ReadStdout(p)
	return err == nil && st.Asked && st.Closed
}

// owner is the claude a session file names: its pid, with its start time
// when the file records one of this boot (Linux: clock ticks since boot,
// the kernel's own field); gone outright when it started before this boot.
func (s *Session) owner(snap *platform.Snapshot) ledger.Owner {
	o := ledger.Owner{Name: OwnerName, PID: s.PID}
	if snap == nil {
		return o
	}
	started := time.UnixMilli(s.StartedAt)
	if boot := snap.Taken.Add(-snap.Uptime); s.StartedAt > 0 && started.Before(boot.Add(-time.Second)) {
		o.Gone = fmt.Sprintf("claude session %s, pid %d, started %s, before this boot", s.SessionID, s.PID, started.UTC().Format(time.RFC3339))
		return o
	}
	if snap.NoReparenting {
		return s.windowsOwner(snap, o)
	}
	recorded := strings.TrimSpace(s.ProcStart)
	if ticks, err := strconv.ParseUint(recorded, 10, 64); err == nil {
		// Linux: clock ticks after boot, the kernel's own field; the scan
		// compares it with the live pid's.
		if snap.BootID != "" && !snap.WallClockStarts() {
			o.Start = platform.FormatIdentity(snap.BootID, ticks)
		}
		return o
	}
	at, err := time.Parse(lstart, recorded)
	q := snap.Get(s.PID)
	if err != nil || q == nil || q.Zombie() {
		return o // no start to compare, or the pid is gone: the scan says so
	}
	// Elsewhere (macOS): `ps -o lstart=` run with LC_ALL=C TZ=UTC, to the
	// second. The live pid is the session's claude when it started within
	// that second; a margin either side keeps a clock's rounding from ever
	// making a live claude look gone.
	if d := snap.Started(q).Sub(at); d > -lstartMargin && d < time.Second+lstartMargin {
		o.Start = snap.Identity(q)
	} else {
		o.Gone = fmt.Sprintf("claude session %s, pid %d, started %s; pid %d now is a process started %s",
			s.SessionID, s.PID, at.Format(time.RFC3339), s.PID, snap.Started(q).UTC().Format(time.RFC3339))
	}
	return o
}

// windowsOwner is owner on Windows, where Claude Code records procStart as
// (Get-CimInstance Win32_Process -Filter "ProcessId=PID").CreationDate.Ticks
// (read from the 2.1.197 win32-x64 binary): .NET ticks, 100 ns since
// 0001-01-01, of the creation time in local time, to the microsecond. The
// live pid is the session's claude when its creation time, so counted (in
// local time or UTC), is within a millisecond of the record; a pid whose
// process was created after the file was written (startedAt) is another
// process. Anything else keeps the pid without a start: taken as the
// claude, so that doubt spares.
func (s *Session) windowsOwner(snap *platform.Snapshot, o ledger.Owner) ledger.Owner {
	q := snap.Get(s.PID)
	if q == nil || q.Zombie() {
		return o // the pid is gone: the scan says so
	}
	created := snap.Started(q)
	if ticks, err := strconv.ParseInt(strings.TrimSpace(s.ProcStart), 10, 64); err == nil {
		_, zone := created.In(time.Local).Zone()
		for _, off := range []int{zone, 0} {
			if d := ticks - netTicks(created, off); d > -netTicksMargin && d < netTicksMargin {
				o.Start = snap.Identity(q)
				return o
			}
		}
	}
	if s.StartedAt > 0 && created.After(time.UnixMilli(s.StartedAt).Add(lstartMargin)) {
		o.Gone = fmt.Sprintf("claude session %s, pid %d, started %s; pid %d now is a process created %s, after the session file was written",
			s.SessionID, s.PID, time.UnixMilli(s.StartedAt).UTC().Format(time.RFC3339), s.PID, created.UTC().Format(time.RFC3339))
	}
	return o
}

// netTicks is t as .NET counts DateTime ticks: 100 ns since 0001-01-01,
// of t's wall clock offset seconds east of UTC.
func netTicks(t time.Time, offset int) int64 {
	const unixEpoch = 621355968000000000 // 1970-01-01 in .NET ticks
	return (t.Unix()+int64(offset))*1e7 + int64(t.Nanosecond()/100) + unixEpoch
}

// netTicksMargin is how far a recorded creation time may be from the
// table's: the record is to the microsecond, the table to 100 ns.
const netTicksMargin = 10_000 // 1 ms

// lstart is how `ps -o lstart=` prints a start under LC_ALL=C and TZ=UTC,
// which is how Claude Code runs it outside Linux.
const lstart = "Mon Jan _2 15:04:05 2006"

const lstartMargin = 2 * time.Second

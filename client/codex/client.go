package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// The owner names Codex's evidence attributes findings to: the client (by
// the TUI's process group) and its managed daemon (by its pid file).
const (
	OwnerName  = "codex"
	DaemonName = "codex-daemon"
)

// The variables: CODEX_HOME moves the state dir; the npm wrapper marks the
// native binary it runs.
const (
	EnvHome   = "CODEX_HOME"
	EnvByNPM  = "CODEX_MANAGED_BY_NPM"
	envPath   = "PATH"
	pidDir    = "app-server-daemon"
	daemonPID = "daemon.pid"
	updatePID = "daemon-updater.pid"
	// legacyPID is the daemon's record as a standalone install (0.148)
	// writes it, {pid, processStartTime} and no identity; 0.171 still
	// attaches to a daemon recorded so.
	legacyPID = "app-server.pid"
)

// The package roots a daemon's servers carry on PATH, by the record's
// layout: an npm install's managed daemon (daemon.pid), a standalone
// install's (app-server.pid).
const (
	managedRoot    = "app-server-daemon"
	standaloneRoot = "standalone"
)

// Adapter is Codex's adapter; Client is it on the client seam
// (client/all lists it).
type Adapter struct{}

var _ client.Adapter[Raw] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[Raw](Adapter{})

// Info: the codex binary names its CODEX_HOME wherever it runs; PATH holds
// the daemon's mark; the owner names are the client's and its daemon's.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Codex", RemoteServer: "`codex mcp add NAME --url URL`", Homes: []string{"~/.codex"}, Announce: []string{pidDir}, EnvNames: []string{EnvHome, EnvByNPM, envPath},
		Owners: []string{OwnerName, DaemonName}, Marks: marks, Comms: []string{"codex"}}
}

// HomeDirs lists ~/.codex when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, ".codex", uid) }

// OwnDirs: CODEX_HOME in reaper's environment.
func (Adapter) OwnDirs(getenv func(string) string) []string { return []string{getenv(EnvHome)} }

// NamedDir: a process's CODEX_HOME.
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	dir, _ := env(EnvHome)
	return dir, EnvHome
}

// IsStateDir reports whether dir is a CODEX_HOME.
func (Adapter) IsStateDir(dir string) bool {
	for _, n := range []string{"config.toml", pidDir, "sessions", "auth.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// cli matches codex (app-server, exec, its TUI) and its ACP adapter
// (@zed-industries/codex-acp): an agent CLI, kind acp.
var cli = scan.MustPattern(`codex-acp|(^|/)codex( |$)`)

// marks: the CLI is acp; what the npm wrapper started is Codex's, by the
// group it kept.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvByNPM, Owner: OwnerName}},
}

// Raw is what one CODEX_HOME says: its daemon records and its config.
type Raw struct {
	statedir.Config
	Daemons []Record `json:"daemons,omitempty"`
	// AppServers are the log store's app-server processes (batches.go).
	AppServers []AppServerLog `json:"appServers,omitempty"`
}

// Record is a daemon pid file as Codex writes it.
type Record struct {
	File             string          `json:"file"`
	Role             string          `json:"role"` // app-server, updater
	PID              int             `json:"pid"`
	ProcessStartTime string          `json:"processStartTime,omitempty"`
	ProcessIdentity  json.RawMessage `json:"processIdentity,omitempty"`
}

// Read reads the daemon records and config.toml's servers, as the dir's
// owner.
func (Adapter) Read(dir string) *Raw {
	head, sd, ok := statedir.Start(dir)
	raw := &Raw{Config: statedir.Config{Head: head}}
	if !ok {
		return raw
	}
	for _, f := range []struct{ name, role string }{{daemonPID, "app-server"}, {legacyPID, "app-server"}, {updatePID, "updater"}} {
		rel := filepath.Join(pidDir, f.name)
		path := filepath.Join(sd.Path, rel)
		b, err := sd.Read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			raw.ReadError(path, err)
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue // a reservation: the daemon is starting, or was
		}
		rec := Record{File: path, Role: f.role}
		if err := json.Unmarshal(b, &rec); err != nil || rec.PID <= 0 {
			raw.Problem(&ledger.Error{File: path, Msg: "not a Codex daemon pid file: want {\"pid\": N, …}"})
			continue
		}
		if why := statedir.CheckID("processStartTime", rec.ProcessStartTime); why != "" || len(rec.ProcessIdentity) > 4*statedir.MaxID {
			raw.Problem(&ledger.Error{File: path, Msg: "not a Codex daemon pid file: its processStartTime or processIdentity is longer than any Codex writes"})
			continue
		}
		rec.File, rec.Role = path, f.role
		if f.name == legacyPID && slices.ContainsFunc(raw.Daemons, func(d Record) bool { return d.Role == "app-server" && d.PID == rec.PID }) {
			continue // both layouts name one daemon: daemon.pid says more
		}
		raw.Daemons = append(raw.Daemons, rec)
	}
	raw.readConfig(sd)
	if len(raw.Servers) > 0 {
		raw.readLogStore(sd) // only a configured stdio server can pile up
	}
	raw.Finish(sd)
	return raw
}

// readConfig reads config.toml's [mcp_servers.NAME] command and args.
func (raw *Raw) readConfig(sd statedir.Dir) {
	file := filepath.Join(sd.Path, "config.toml")
	b := raw.ReadFile(sd, "config.toml")
	if b == nil {
		return
	}
	var cfg struct {
		MCPServers map[string]toml.Primitive `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(b), &cfg)
	if err != nil {
		line := 0
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line = pe.Position.Line
		}
		raw.ConfigProblems = append(raw.ConfigProblems, (&ledger.Error{File: file, Line: line, Msg: "not a Codex config"}).Error())
		return
	}
	names, bad := statedir.ServerNames(file+": mcp_servers", cfg.MCPServers)
	raw.ConfigProblems = append(raw.ConfigProblems, bad...)
	for _, n := range names {
		var s struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		}
		if err := md.PrimitiveDecode(cfg.MCPServers[n], &s); err != nil {
			raw.ConfigProblems = append(raw.ConfigProblems, fmt.Sprintf("%s: mcp_servers.%s: want command = string, args = [string]", file, statedir.KeyName(n)))
			continue
		}
		if strings.TrimSpace(s.Command) == "" {
			continue // a streamable HTTP server: no local process
		}
		raw.Servers = append(raw.Servers, scan.Server{Name: n, Command: s.Command, Args: s.Args, File: file})
	}
}

// Judge turns a CODEX_HOME's read into evidence spoken by uid: each daemon
// record a ledger whose owner and one run are the daemon (a live daemon
// whose record verifies is owned, never a finding), and the app-server's
// PATH mark tied to it; the config's servers.
func (Adapter) Judge(raw *Raw, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string) {
	dir := raw.Dir
	ev.Servers = raw.ServersOf(uid)
	adv := &batches{uid: uid, dir: dir, servers: ev.Servers, logs: checkedLogs(raw.AppServers)}
	for _, rec := range raw.Daemons {
		owner := rec.owner(snap)
		if rec.Role == "app-server" && snap != nil && owner.Gone == "" && owner.Start != "" && !ownerGone(snap, uid, owner) {
			adv.daemons = append(adv.daemons, rec.PID)
		}
		ev.Ledgers = append(ev.Ledgers, &ledger.Ledger{Version: ledger.Version, Source: rec.File, Speaker: uid, Owner: owner,
			Runs: []ledger.Run{{ID: "codex " + rec.Role + " daemon", Kind: ledger.KindACP, PID: rec.PID, Start: owner.Start, State: ledger.RunRunning}}})
		if rec.Role == "app-server" {
			// Each layout's record ties the servers of its own package
			// root: two records never claim one server.
			root := managedRoot
			if filepath.Base(rec.File) == legacyPID {
				root = standaloneRoot
			}
			mark := filepath.Join(dir, "packages", root) + string(filepath.Separator)
			ev.Ties = append(ev.Ties, scan.Tie{Env: envPath, Value: mark, InList: true, Strong: envPath,
				Owner: owner, Speaker: uid, Where: "Codex home " + dir, Proof: "the daemon pid file " + rec.File, Noun: "codex daemon"})
		}
	}
	if len(adv.logs) > 0 && len(adv.servers) > 0 {
		ev.Advisers = append(ev.Advisers, adv)
	}
	return ev, raw.Errors(), raw.Warnings()
}

// ownerGone is scan.OwnerGone for a daemon record of uid's.
func ownerGone(snap *platform.Snapshot, uid uint32, o ledger.Owner) bool {
	gone, _ := scan.OwnerGone(snap, scan.RecordedBy(uid, o.PID, o.Start))
	return gone
}

// owner is the daemon a record names: its pid, with its start identity
// when the record's identity is of this machine's kind and boot; gone
// when it is of another boot. Codex writes one of three shapes
// (codex-rs/app-server-daemon, ProcessIdentity, serde untagged): Linux
// {bootId, startTicks}; macOS {startSeconds, startMicroseconds}, with
// {bootId, uniqueId} too in newer releases. A Linux identity means
// nothing on a macOS table and the other way round: then only the pid is
// compared.
func (rec *Record) owner(snap *platform.Snapshot) ledger.Owner {
	o := ledger.Owner{Name: DaemonName, PID: rec.PID}
	id, ok := parseIdentity(rec.ProcessIdentity)
	if snap == nil {
		return o
	}
	if !ok && snap.NoReparenting {
		return rec.windowsOwner(snap, o)
	}
	if !ok {
		// No identity (app-server.pid): processStartTime, `ps -o lstart=`
		// text, confirms the live pid when it names its start to the
		// second in UTC. It never proves the daemon gone — its clock's
		// zone is not recorded — so a pid that lives and does not match
		// is left to the pid alone, owned.
		if at, err := time.Parse(lstartUTC, strings.Join(strings.Fields(rec.ProcessStartTime), " ")); err == nil {
			if q := snap.Get(rec.PID); q != nil && !q.Zombie() {
				if d := snap.Started(q).Sub(at); d > -2*time.Second && d < 3*time.Second {
					o.Start = snap.Identity(q)
				}
			}
		}
		return o
	}
	switch mac := snap.WallClockStarts(); {
	case id.linux() == mac: // another kind of machine's: the pid alone
	case id.BootID != "" && snap.BootID != "" && id.BootID != snap.BootID:
		o.Gone = fmt.Sprintf("%s names pid %d of boot %s, not this one", rec.File, rec.PID, id.BootID)
	case mac:
		o.Start = platform.FormatDarwinIdentity(*id.StartSeconds*1e6 + *id.StartMicros)
	case snap.BootID != "":
		o.Start = platform.FormatIdentity(id.BootID, *id.StartTicks)
	}
	return o
}

// windowsOwner is owner on a Windows table, where Codex's daemon records
// no processIdentity and its processStartTime is the creation time
// GetProcessTimes gives, a FILETIME in decimal (codex-rs/app-server-daemon,
// backend/windows.rs): 100 ns since 1601, UTC. The live pid is the daemon
// when it was created within a millisecond of that; a pid created later
// is another process (the daemon exited and its pid was given again).
// Anything else keeps the pid alone: taken as the daemon, so that doubt
// spares.
func (rec *Record) windowsOwner(snap *platform.Snapshot, o ledger.Owner) ledger.Owner {
	ft, err := strconv.ParseUint(strings.TrimSpace(rec.ProcessStartTime), 10, 64)
	q := snap.Get(rec.PID)
	if err != nil || ft < fileTimeEpoch || q == nil || q.Zombie() {
		return o
	}
	at := time.UnixMicro(int64((ft - fileTimeEpoch) / 10))
	switch d := snap.Started(q).Sub(at); {
	case d > -time.Millisecond && d < time.Millisecond:
		o.Start = snap.Identity(q)
	case d > 0:
		o.Gone = fmt.Sprintf("%s names pid %d created %s; pid %d now is a process created %s", rec.File, rec.PID,
			at.UTC().Format(time.RFC3339Nano), rec.PID, snap.Started(q).UTC().Format(time.RFC3339Nano))
	}
	return o
}

// fileTimeEpoch is the Unix epoch as a FILETIME: 100 ns intervals since
// 1601-01-01 UTC.
const fileTimeEpoch = 116444736000000000

// lstartUTC is `ps -o lstart=` text under LC_ALL=C, its spaces folded.
const lstartUTC = "Mon Jan 2 15:04:05 2006"

// identity is a record's processIdentity, whichever shape.
type identity struct {
	BootID       string  `json:"bootId"`
	StartTicks   *uint64 `json:"startTicks"`
	StartSeconds *uint64 `json:"startSeconds"`
	StartMicros  *uint64 `json:"startMicroseconds"`
}

func (id identity) linux() bool { return id.BootID != "" && id.StartTicks != nil }

func (id identity) mac() bool {
	return id.StartTicks == nil && id.StartSeconds != nil && id.StartMicros != nil &&
		*id.StartSeconds < 1<<40 && *id.StartMicros < 1e6
}

// parseIdentity finds an identity in a record's processIdentity, however
// the enum is written: flat (untagged, as Codex 0.169 writes it), tagged
// ({"kind": "linux", "bootId": …}) or by variant ({"Linux": {"bootId": …}}).
func parseIdentity(raw json.RawMessage) (identity, bool) {
	var flat identity
	if json.Unmarshal(raw, &flat) == nil && (flat.linux() || flat.mac()) {
		return flat, true
	}
	var byVariant map[string]json.RawMessage
	if json.Unmarshal(raw, &byVariant) != nil {
		return identity{}, false
	}
	for _, v := range byVariant {
		var in identity
		if json.Unmarshal(v, &in) == nil && (in.linux() || in.mac()) {
			return in, true
		}
	}
	return identity{}, false
}

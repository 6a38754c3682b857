package cline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// The owner names Cline's evidence attributes findings to: the CLI (by
// its process group) and its hub daemon (by its lock).
const (
	OwnerName = "cline"
	HubName   = "cline-hub"
)

// EnvLaunch is the variable cline puts on what it spawns (JSON naming the
// launcher): a leader mark. EnvDir moves ~/.cline (3.0.65: CLINE_DIR, else
// the home's .cline).
const (
	EnvLaunch = "CLINE_CONNECTOR_CLI_LAUNCH"
	EnvDir    = "CLINE_DIR"
)

const (
	locksDir     = "data/locks/hub"
	settingsFile = "data/settings/cline_mcp_settings.json"
	// maxLocks bounds the hub lock files read: one per hub (production).
	maxLocks = 16
	// hubWrites is how long after its start a hub writes its lock
	// (1.1 s measured here, 3.0.65): a live pid that started longer before
	// the lock's startedAt, or after it, is another process.
	hubWrites = 30 * time.Second
)

// Adapter is Cline's adapter; Client is it on the client seam (client/all
// lists it).
type Adapter struct{}

var _ client.Adapter[Raw] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[Raw](Adapter{})

// Info: Cline's marker, its owner names, its processes' title.
func (Adapter) Info() client.Info {
	return client.Info{Name: OwnerName, Title: "Cline", RemoteServer: "`\"NAME\": {\"type\": \"streamableHttp\", \"url\": \"URL\"}` in its MCP settings", Homes: []string{"~/.cline"}, EnvNames: append([]string{EnvLaunch, EnvDir}, statedir.HomeVars...),
		Owners: []string{OwnerName, HubName}, Marks: marks, Comms: []string{"cline"}}
}

// HomeDirs lists ~/.cline when it is the account's.
func (Adapter) HomeDirs(home string, uid int) []string { return statedir.HomeDir(home, ".cline", uid) }

// OwnDirs: CLINE_DIR in reaper's environment.
func (Adapter) OwnDirs(getenv func(string) string) []string { return []string{getenv(EnvDir)} }

// NamedDir: a cline process's CLINE_DIR, or the .cline of its HOME (a hub
// whose user's home is not the account's, as in a container or a test).
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	if dir, ok := env(EnvDir); ok && strings.TrimSpace(dir) != "" {
		return strings.TrimSpace(dir), EnvDir
	}
	if home, ok := statedir.ProcessHome(env); ok {
		return filepath.Join(home, ".cline"), client.FromHome
	}
	return "", ""
}

// IsStateDir reports whether dir is a Cline dir.
func (Adapter) IsStateDir(dir string) bool {
	for _, n := range []string{"data/settings", "data/locks"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// cli matches the cline binary (its npm platform package's, or the
// wrapper's): an agent CLI, kind acp. The hub daemon is the same binary;
// it leads a session of its own, so it is never taken as a headless CLI.
var cli = scan.MustPattern(`(^|/)cline( |$)`)

// marks: cline's processes are acp; CLINE_CONNECTOR_CLI_LAUNCH ties what
// it spawned to its process group.
var marks = scan.Marks{
	Commands: []scan.CommandMark{{Cmdline: cli, Kind: ledger.KindACP, Owner: OwnerName}},
	Leaders:  []scan.LeaderMark{{Env: EnvLaunch, Owner: OwnerName}},
}

// Raw is what one ~/.cline says: its hub locks and its MCP servers.
type Raw struct {
	statedir.Config
	Hubs []Hub `json:"hubs,omitempty"`
}

// Hub is a hub daemon's lock as Cline writes it.
type Hub struct {
	File      string    `json:"file"`
	HubID     string    `json:"hubId"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
}

// Read reads the hub locks and the MCP settings, as the dir's owner.
func (Adapter) Read(dir string) *Raw {
	head, sd, ok := statedir.Start(dir)
	raw := &Raw{Config: statedir.Config{Head: head}}
	if !ok {
		return raw
	}
	raw.readHubs(sd)
	raw.readSettings(sd)
	raw.Finish(sd)
	return raw
}

// readHubs reads data/locks/hub/*.json, at most maxLocks of them, the
// newest first (statedir.Choose): a lock names its hub's pid inside, so
// one past the bound may be a live hub's — the owner's doubt, with the
// newest read all the same.
func (raw *Raw) readHubs(sd statedir.Dir) {
	path := filepath.Join(sd.Path, locksDir)
	isLock := func(n string) bool { return strings.HasSuffix(n, ".json") }
	chosen, err := statedir.Choose(path, isLock, func(string) int { return 0 }, maxLocks)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		raw.ReadError(path, err)
		return
	}
	if why := chosen.Doubt("hub locks", maxLocks); why != "" {
		raw.Problem(&ledger.Error{File: path, Msg: why})
	}
	files := chosen.Names
	for _, n := range files {
		rel := filepath.Join(locksDir, n)
		file := filepath.Join(sd.Path, rel)
		b, err := sd.Read(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue // its hub ended while the dir was read
		}
		if err != nil {
			raw.ReadError(file, err)
			continue
		}
		var h Hub
		if err := json.Unmarshal(b, &h); err != nil || h.PID <= 0 || h.StartedAt.IsZero() {
			raw.Problem(&ledger.Error{File: file, Msg: "not a Cline hub lock: want {\"pid\": N, \"startedAt\": TIME, …}"})
			continue
		}
		if why := statedir.CheckID("hubId", h.HubID); why != "" {
			raw.Problem(&ledger.Error{File: file, Msg: "not a Cline hub lock: " + why})
			continue
		}
		h.File = file
		raw.Hubs = append(raw.Hubs, h)
	}
}

// readSettings reads the MCP settings' stdio servers: mcpServers.NAME with
// a transport {type stdio, command, args}, or (older releases) command and
// args on the entry itself.
func (raw *Raw) readSettings(sd statedir.Dir) {
	file := filepath.Join(sd.Path, settingsFile)
	b := raw.ReadFile(sd, settingsFile)
	if b == nil {
		return
	}
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		raw.ConfigProblems = append(raw.ConfigProblems, (&ledger.Error{File: file, Line: statedir.JSONErrLine(b, err), Msg: "not Cline's MCP settings: " + statedir.JSONProblem(err)}).Error())
		return
	}
	flat := map[string]json.RawMessage{}
	for name, entry := range cfg.MCPServers {
		var e struct {
			Transport json.RawMessage `json:"transport"`
		}
		if json.Unmarshal(entry, &e) == nil && len(e.Transport) > 0 {
			flat[name] = e.Transport
		} else {
			flat[name] = entry
		}
	}
	srv, bad := statedir.StdioServers(file, "mcpServers", flat)
	raw.Servers, raw.ConfigProblems = append(raw.Servers, srv...), append(raw.ConfigProblems, bad...)
}

// Judge turns a ~/.cline's read into evidence spoken by uid: each hub lock
// a ledger whose owner and one run are the hub (a live hub whose start
// fits its lock is owned, never a finding); the settings' servers.
func (Adapter) Judge(raw *Raw, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string) {
	ev.Servers = raw.ServersOf(uid)
	for _, h := range raw.Hubs {
		if why := statedir.CheckID("hubId", h.HubID); why != "" || h.PID <= 0 {
			problems = append(problems, &ledger.Error{File: h.File, Msg: "not a Cline hub lock"})
			continue
		}
		owner := h.owner(snap)
		ev.Ledgers = append(ev.Ledgers, &ledger.Ledger{Version: ledger.Version, Source: h.File, Speaker: uid, Owner: owner,
			Runs: []ledger.Run{{ID: "cline hub " + h.HubID, Kind: ledger.KindACP, PID: h.PID, Start: owner.Start, State: ledger.RunRunning}}})
	}
	return ev, append(raw.Errors(), problems...), raw.Warnings()
}

// owner is the hub a lock names: its pid, with the live process's start
// identity when that process started within hubWrites before the lock's
// startedAt (the hub writes it as it comes up); another process when it
// started outside that window.
func (h *Hub) owner(snap *platform.Snapshot) ledger.Owner {
	o := ledger.Owner{Name: HubName, PID: h.PID}
	if snap == nil {
		return o
	}
	q := snap.Get(h.PID)
	if q == nil || q.Zombie() {
		return o // gone: the scan says so
	}
	started := snap.Started(q)
	if d := h.StartedAt.Sub(started); d > -time.Second && d < hubWrites {
		o.Start = snap.Identity(q)
		return o
	}
	o.Gone = fmt.Sprintf("the hub lock %s names pid %d, started %s; pid %d now is a process started %s",
		h.File, h.PID, h.StartedAt.UTC().Format(time.RFC3339), h.PID, started.UTC().Format(time.RFC3339))
	return o
}

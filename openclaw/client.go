package openclaw

import (
	"fmt"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
	"github.com/orphanreaper/reaper/statedir"
)

// Client is OpenClaw's adapter on the client seam (package client lists
// it): where its state dirs are, how one is read (as its owner), and what
// a read says, as evidence scan applies without knowing OpenClaw.
type Client struct{}

// Name names the client in reaper's messages.
func (Client) Name() string { return "openclaw" }

// HomeDirs lists the state dirs in one account's home (StateDirs).
func (Client) HomeDirs(home string, uid int) []string {
	return StateDirs([]Home{{Dir: home, UID: uid}}, nil)
}

// OwnDirs: OPENCLAW_STATE_DIR (or the older CLAWDBOT_STATE_DIR) in
// reaper's own environment.
func (Client) OwnDirs(getenv func(string) string) []string {
	return []string{getenv(EnvStateDir), getenv("CLAWDBOT_STATE_DIR")}
}

// NamedDir: a gateway's OPENCLAW_STATE_DIR, which its children and its
// survivors carry too.
func (Client) NamedDir(env func(string) (string, bool)) (string, string) {
	dir, _ := env(EnvStateDir)
	return dir, EnvStateDir
}

// IsOwner reports whether a process's comm is the gateway's title: its
// state dir is read wherever it runs.
func (Client) IsOwner(comm string) bool { return IsGatewayComm(comm) }

// EnvNames are the variables scan looks up on processes.
func (Client) EnvNames() []string { return EnvNames }

// IsStateDir reports whether dir holds OpenClaw state.
func (Client) IsStateDir(dir string) bool { return IsStateDir(dir) }

// Owners are the names OpenClaw's evidence attributes findings to: the
// gateway, and the codex app-server it runs.
func (Client) Owners() []string { return []string{OwnerName, CodexOwnerName} }

// Marks are OpenClaw's kinds and supervisors.
func (Client) Marks() scan.Marks { return marks }

// Read reads one state dir, in the reader child as its owner: plain data
// (Raw) that crosses the process boundary as JSON.
func (Client) Read(dir string) any { return ReadRaw(dir) }

// Decode is what Read printed for dir, decoded and checked to be uid's
// read of dir; it needs no table (Judge does).
func (Client) Decode(b []byte, dir string, uid uint32) any {
	return statedir.DecodeAs(b, dir, uid, "OpenClaw", func(r *Raw) *statedir.Head { return &r.Head })
}

// Judge turns what Read printed for dir into evidence, as the word of uid
// (the dir's owner when it was listed, whom the reader ran as): the ledgers
// of its leases, registry rows and task store (exec rows tied to the live
// processes that run them, when snap is the live table), the ties its
// newest gateway lock makes, its config's MCP servers, and the advice on
// its gateway. problems are what could not be read, and cast doubt on
// uid's trees; warnings what could not be read without doing so.
func (Client) Judge(v any, dir string, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string) {
	raw, problems, warnings := statedir.Judged(v, dir, "OpenClaw", (*Raw).warnings)
	if raw == nil {
		return ev, problems, warnings
	}
	warnings = raw.warnings()
	var boot Boot
	if snap != nil {
		boot = Boot{ID: snap.BootID, Time: snap.Taken.Add(-snap.Uptime)}
	}
	st, problems := raw.State(uid, boot)
	ev.Ledgers = st.Ledgers
	adv := &adviser{Dir: dir, LiveSessions: -1, Servers: st.Servers}
	for i := range st.Servers {
		ev.Servers = append(ev.Servers, st.Servers[i].Server)
	}
	owner := ledger.Owner{Name: OwnerName} // unknown: proves nothing either way
	if gw := st.Gateway; gw != nil {
		ev.Ties = gw.ties()
		owner = gw.Owner
		adv.Gateway = gw
	}
	if tasks := st.Tasks; tasks != nil && snap != nil {
		ev.Ledgers = append(ev.Ledgers, tasks.Ledger(owner, snap))
		if tasks.Sessions != nil {
			adv.LiveSessions = len(tasks.Sessions.Live)
		}
		adv.Codex = tasks.CodexAppServers(snap, st.Servers)
		for _, as := range adv.Codex {
			ev.Ledgers = append(ev.Ledgers, tasks.CodexLedger(as,
				ledger.Owner{Name: CodexOwnerName, PID: as.PID, Start: as.Start}))
		}
		if tasks.BadCodexRows > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %d codex plugin rows did not parse (skipped: their threads are not shown ended)", tasks.Source, tasks.BadCodexRows))
		}
	}
	if adv.Gateway != nil {
		ev.Advisers = []scan.Adviser{adv}
	}
	return ev, problems, warnings
}

// ties are what the gateway lock says of the processes that name its state
// dir: exec children carry OPENCLAW_SHELL too, and are tied outright; an
// ACP adapter only the state dir, which a user may also have exported in a
// shell of their own, so such a root is tied only when it started after the
// gateway took its lock (while it ran). In a user's ~/.openclaw, where a
// child with no OPENCLAW_STATE_DIR belongs, OPENCLAW_SHELL alone ties that
// user's processes.
func (gw *Gateway) ties() []scan.Tie {
	t := scan.Tie{Env: EnvStateDir, Value: gw.StateDir, Strong: EnvShell, Since: gw.Created,
		Owner: gw.Owner, Speaker: uint32(gw.UID),
		Where: "state dir " + gw.StateDir, Proof: "the gateway lock " + gw.Lock, Noun: "gateway"}
	out := []scan.Tie{t}
	if gw.Default {
		t.Env, t.Value, t.Unless = EnvShell, "", EnvStateDir
		out = append(out, t)
	}
	return out
}

// warnings are what a read says without casting doubt: files of another
// owner, not read, and a config that could not be read (it only
// classifies).
func (raw *Raw) warnings() []string {
	out := append([]string{}, raw.Skipped...)
	if raw.ConfigProblem != "" {
		out = append(out, raw.ConfigProblem+" (its MCP servers are recognised by fingerprint only)")
	}
	return out
}

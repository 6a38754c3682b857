package openclaw

import (
	"fmt"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Adapter is OpenClaw's adapter: where its state dirs are, how one is read
// (as its owner), and what a read says, as evidence scan applies without
// knowing OpenClaw. Client is it on the client seam (client/all lists it).
type Adapter struct{}

var _ client.Adapter[Raw] = Adapter{}

// Client is the adapter as the rest of reaper handles it.
var Client = client.New[Raw](Adapter{})

// Info: the gateway's title (its state dir is read wherever it runs), the
// markers scan looks up, the owner names OpenClaw's evidence uses — the
// gateway, and the codex app-server it runs — and its kinds and
// supervisors.
func (Adapter) Info() client.Info {
	return client.Info{Name: "openclaw", Title: "OpenClaw", Homes: []string{"~/.openclaw", "~/.openclaw-*", "~/.clawdbot", "~/.moldbot", "~/.moltbot"}, EnvNames: EnvNames,
		Owners: []string{OwnerName, CodexOwnerName}, Marks: marks, Comms: []string{gatewayComm}}
}

// HomeDirs lists the state dirs in one account's home (StateDirs).
func (Adapter) HomeDirs(home string, uid int) []string {
	return StateDirs([]Home{{Dir: home, UID: uid}}, nil)
}

// OwnDirs: OPENCLAW_STATE_DIR (or the older CLAWDBOT_STATE_DIR) in
// reaper's own environment.
func (Adapter) OwnDirs(getenv func(string) string) []string {
	return []string{getenv(EnvStateDir), getenv("CLAWDBOT_STATE_DIR")}
}

// NamedDir: a gateway's OPENCLAW_STATE_DIR, which its children and its
// survivors carry too.
func (Adapter) NamedDir(env func(string) (string, bool)) (string, string) {
	dir, _ := env(EnvStateDir)
	return dir, EnvStateDir
}

// IsStateDir reports whether dir holds OpenClaw state.
func (Adapter) IsStateDir(dir string) bool { return IsStateDir(dir) }

// Read reads one state dir, in the reader child as its owner: plain data
// (Raw) that crosses the process boundary as JSON.
func (Adapter) Read(dir string) *Raw { return ReadRaw(dir) }

// Judge turns what Read printed for dir into evidence, as the word of uid
// (the dir's owner when it was listed, whom the reader ran as): the ledgers
// of its leases, registry rows and task store (exec rows tied to the live
// processes that run them, when snap is the live table), the ties its
// newest gateway lock makes, its config's MCP servers, and the advice on
// its gateway. problems are what could not be read, and cast doubt on
// uid's trees; warnings what could not be read without doing so.
func (Adapter) Judge(raw *Raw, uid uint32, snap *platform.Snapshot) (ev scan.Evidence, problems []error, warnings []string) {
	dir := raw.Dir
	warnings = raw.Warnings()
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

// Warnings are what a read says without casting doubt: files of another
// owner, not read, and a config that could not be read (it only
// classifies).
func (raw *Raw) Warnings() []string {
	out := append([]string{}, raw.Skipped...)
	if raw.ConfigProblem != "" {
		out = append(out, raw.ConfigProblem+" (its MCP servers are recognised by fingerprint only)")
	}
	return out
}

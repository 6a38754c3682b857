package pi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// agentDir is ~/.pi/agent as pi leaves it after a session.
func agentDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".pi", "agent")
	os.MkdirAll(filepath.Join(dir, "sessions", "--w--"), 0o700)
	os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"defaultProvider": "local"}`), 0o600)
	return dir
}

// toolShell is the bash tool's shell as pi spawns it (detached: its own
// session and group), pid 820 of uid, reparented, with the command it
// runs below it.
func toolShell(uid uint32) []platform.Process {
	env := []string{EnvAgent + "=true", "PATH=/home/u/.pi/agent/bin:/usr/bin:/bin"}
	return []platform.Process{
		clienttest.Proc(820, 1, 820, uid, []string{"/bin/bash", "-c", "sleep 300; true"}, env),
		clienttest.Proc(821, 820, 820, uid, []string{"sleep", "300"}, env),
	}
}

// pi is pi's own process, pid of uid, as it titles itself.
func pi(pid int, uid uint32) platform.Process {
	return clienttest.Proc(pid, 400, pid, uid, []string{"pi"}, nil)
}

// A tool's shell whose user runs no pi that started before it was spawned
// by a pi that is gone: owner-dead, pi's, kind exec, the tree whole. The
// controls: a pi of that user's (or root's) started before it is alive —
// it may be the one; and what does not carry the mark is no one's.
func TestSpawnerGone(t *testing.T) {
	const uid = 1000
	later, zombie := pi(830, uid), pi(810, uid)
	zombie.State = 'Z'
	for _, tc := range []struct {
		name string
		also []platform.Process
		dead bool
	}{
		{"no pi at all", nil, true},
		{"a pi started after it", []platform.Process{later}, true},
		{"a pi that has exited (zombie)", []platform.Process{zombie}, true},
		{"another user's pi, older", []platform.Process{pi(810, uid+1)}, true},
		{"control: a pi of its user's, older", []platform.Process{pi(810, uid)}, false},
		{"control: root's pi, older", []platform.Process{pi(810, 0)}, false},
	} {
		r := clienttest.Scan(t, Client, agentDir(t), uid, append(toolShell(uid), tc.also...)...)
		f := clienttest.Finding(r, 820)
		if f == nil {
			t.Errorf("%s: no finding", tc.name)
			continue
		}
		if f.Has(scan.OwnerDead) != tc.dead || f.Owner != OwnerName || f.Kind != scan.KindExec || len(f.Members) != 2 {
			t.Errorf("%s: reasons %v, owner %q, kind %s, %d members; want owner-dead %v, pi's, exec, 2 members\n%q", tc.name, f.Reasons, f.Owner, f.Kind, len(f.Members), tc.dead, f.Evidence)
		}
		if want := "PI_CODING_AGENT=true: spawned by pi"; !strings.Contains(strings.Join(f.Evidence, "\n"), want) {
			t.Errorf("%s: evidence %q, want %q", tc.name, f.Evidence, want)
		}
	}
	// A root whose user is not known: which pi could have spawned it is
	// not known either, so nothing is shown.
	unknown := toolShell(platform.NoUID)
	if f := clienttest.Finding(clienttest.Scan(t, Client, agentDir(t), uid, unknown...), 820); f == nil || f.Owner != OwnerName || f.Has(scan.OwnerDead) {
		t.Errorf("control: its user not known: %+v, want pi's, not owner-dead", f)
	}
	unmarked := toolShell(uid)
	for i := range unmarked {
		unmarked[i] = clienttest.Proc(unmarked[i].PID, unmarked[i].PPID, unmarked[i].PGID, uid, []string{"/bin/bash", "-c", "sleep 300"}, nil)
	}
	if f := clienttest.Finding(clienttest.Scan(t, Client, agentDir(t), uid, unmarked...), 820); f == nil || f.Owner != "" || f.Has(scan.OwnerDead) {
		t.Errorf("control: no mark: %+v, want a finding of no one's", f)
	}
}

// A live pi whose terminal is gone (reparented, not leading its session)
// is a session, never a finding; its tool's shell is its child, no finding
// either. Control: a pi that leads its own session (setsid) stays a
// finding, for its record to say — it has none, so reparented alone.
func TestLivePiIsSession(t *testing.T) {
	const uid = 1000
	live := clienttest.Proc(810, 1, 810, uid, []string{"pi"}, nil)
	live.SID = 400
	shell := toolShell(uid)
	shell[0].PPID = 810
	r := clienttest.Scan(t, Client, agentDir(t), uid, append(shell, live)...)
	if f := clienttest.Finding(r, 810); f != nil {
		t.Errorf("a live pi, reparented: a finding %v %q", f.Reasons, f.Evidence)
	}
	if why, ok := r.LiveClient(810); !ok || !strings.Contains(why, "pi's own process, alive") {
		t.Errorf("a live pi, reparented: %q %v, want it a session", why, ok)
	}
	if f := clienttest.Finding(r, 820); f != nil {
		t.Errorf("its tool's shell: a finding %+v", f)
	}
	r = clienttest.Scan(t, Client, agentDir(t), uid, clienttest.Proc(810, 1, 810, uid, []string{"pi"}, nil))
	if f := clienttest.Finding(r, 810); f == nil {
		t.Errorf("control: a pi leading its own session: no finding")
	}
}

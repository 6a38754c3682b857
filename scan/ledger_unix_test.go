//go:build unix

// An OpenClaw gateway's lock and state dir, spelled as Unix spells them.

package scan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// A foreground gateway's survivor carries OPENCLAW_SHELL but no pid marker:
// the state dir's gateway lock attributes it, owner-dead when the pid the
// lock names is gone. Controls: a lock naming a live gateway attributes
// without owner-dead; a process without OpenClaw's marker stays untracked.
func TestOpenClawGatewayLock(t *testing.T) {
	gateway := p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/")
	shell := func(env ...string) platform.Process {
		return p(300, 1, "bash", []string{"bash", "-c", "nohup daemon"}, env, "/")
	}
	gw := func(pid int, start string) []Tie {
		return gatewayTies("/home/a/.openclaw", true, 1000, ledger.Owner{Name: "openclaw-gateway", PID: pid, Start: start},
			"/home/a/.openclaw/tmp/openclaw-1000/gateway.1a2b3c4d.lock", time.Time{})
	}
	for _, tt := range []struct {
		name     string
		root     platform.Process
		gws      []Tie
		want     []string
		evidence string
	}{
		{"the lock names a dead gateway", shell("OPENCLAW_SHELL=exec"), gw(4242, id(4242)), []string{"300:reparented,owner-dead"}, "gateway.1a2b3c4d.lock names pid 4242"},
		{"by its explicit state dir", shell("OPENCLAW_SHELL=exec", "OPENCLAW_STATE_DIR=/home/a/.openclaw/"), gw(4242, ""), []string{"300:reparented,owner-dead"}, "pid 4242 is gone"},
		{"control: the lock names the live gateway", shell("OPENCLAW_SHELL=exec"), gw(200, id(200)), []string{"300:reparented"}, "left behind by the live gateway pid 200"},
		{"control: another state dir", shell("OPENCLAW_SHELL=exec", "OPENCLAW_STATE_DIR=/srv/other"), gw(4242, ""), []string{"300:reparented,untracked"}, ""},
		{"control: no OpenClaw marker", shell(), gw(4242, ""), []string{"300:reparented,untracked"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(gateway, tt.root), testConfig)
			r.ApplyTies(tt.gws)
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Fatalf("findings %v, want %v", g, tt.want)
			}
			if ev := strings.Join(r.Findings[0].Evidence, "\n"); !strings.Contains(ev, tt.evidence) {
				t.Errorf("evidence %q lacks %q", ev, tt.evidence)
			}
		})
	}
}

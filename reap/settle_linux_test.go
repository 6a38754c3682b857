package reap

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/policy"
)

// A tree rooted at an OpenClaw supervisor that is still cleaning up (here:
// it kills its child and exits after a second) is left to it:
// nothing is signalled and the outcome is gone. The control, a supervisor
// that does not finish within the settle wait, is reaped.
func TestSupervisorSettles(t *testing.T) {
	for _, tt := range []struct {
		name    string
		script  string
		outcome policy.Outcome
		signals bool
	}{
		{"cleans up on its own", "sleep 60 & sleep 1; kill $!; wait; exit 0", policy.Gone, false},
		{"control: stuck", "sleep 60 & wait", policy.Killed, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := startTree(t, tt.script, true)
			waitMembers(t, cmd.Process.Pid, 2)
			plan, s := planFor(t, cmd.Process.Pid, policy.Terminate)
			plan.Items[0].Finding.Supervisor = "OpenClaw spawn broker"
			rec := &recorder{}
			opt := options(rec)
			opt.SettleWait = 4 * time.Second
			if tt.signals {
				opt.SettleWait = 300 * time.Millisecond
			}
			res := Execute(context.Background(), plan, s, opt)
			if res[0].Outcome != tt.outcome || !strings.Contains(res[0].Detail, "OpenClaw spawn broker") {
				t.Fatalf("outcome %s (%s), want %s", res[0].Outcome, res[0].Detail, tt.outcome)
			}
			if sent := len(rec.events) > 0; sent != tt.signals {
				t.Errorf("signals sent: %v, want %v (%d events)", sent, tt.signals, len(rec.events))
			}
		})
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// TestStartupHook runs the shipped Node startup hook from a stand-in
// gateway, against the ledger of a previous gateway that was SIGKILLed:
// when the new gateway goes on, none of the old runs' processes lives.
// The control: before the hook, they all do.
func TestStartupHook(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		skips.Skip(t, "needs node (CI installs it): the hook under test is a Node module")
	}
	clitest.BecomeSubreaper(t)
	g := startGateway(t, "18805")
	roots := rootsOf(t, g)
	ledgerPath := writeGatewayLedger(t, g, roots, nil, nil, nil)
	killGateway(t, g)
	time.Sleep(200 * time.Millisecond) // the control's window: an orphan that would die on its own has
	old := liveHelpers(g)
	if len(old) != len(g.pids)-1 {
		t.Fatalf("control: %d of %d processes of the old generation alive before the hook", len(old), len(g.pids)-1)
	}
	pol := clitest.WritePolicy(t, `version = 1
[defaults]
min_age = "0s"
grace = "2s"
[[owner]]
name = "fake-gateway"
cmdline = 'dist/entry\.js gateway'
[[rule]]
name = "previous-generation"
when = ["owner-dead"]
action = "terminate"
`)
	args := []string{"../../testdata/hook/gateway.mjs", clitest.Bin, ledgerPath, pol}
	for _, pid := range old {
		args = append(args, fmt.Sprint(pid))
	}
	cmd := exec.Command(node, args...)
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gateway: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		Continuing bool
		Alive      []string
		Findings   int
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !got.Continuing || len(got.Alive) > 0 || got.Findings != 3 {
		t.Errorf("when the gateway went on: %+v; want none of %v alive, 3 trees found", got, old)
	}
}

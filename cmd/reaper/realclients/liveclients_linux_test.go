package realclients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealLiveClientsAreSessions: each client run as `nohup CLIENT … &`
// from a shell that then exits — reparented to this test (the
// precondition, checked), its turn in flight — is a session in `reaper
// ps` and in no view an orphan: no finding, no unmatched tree in `reaper
// scan --all`, with the embedded default policy. OpenCode and Kilo (each
// its own platform binary), pi and Continue's cn (node scripts, one
// titled pi, one node).
func TestRealLiveClientsAreSessions(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, c := range []struct {
		name   string
		client string // its client name in ps
		setup  func(home, addr, mark string) []string
		argv   func(mark string) []string
	}{
		{"opencode run", "opencode", func(h, a, m string) []string { return realclients.OpenCodeSetup(h, a, m) },
			func(m string) []string {
				return []string{filepath.Join(mods, "opencode-linux-x64", "bin", "opencode"), "run", "say hello " + m}
			}},
		{"kilo run", "kilo", func(h, a, m string) []string { return realclients.KiloSetup(h, a, m) },
			func(m string) []string {
				return []string{filepath.Join(mods, "@kilocode", "cli-linux-x64", "bin", "kilo"), "run", "say hello " + m}
			}},
		{"pi -p", "pi", func(h, a, _ string) []string { return realclients.PiSetup(h, a) },
			func(m string) []string {
				return []string{"node", filepath.Join(mods, "@mariozechner", "pi-coding-agent", "dist", "cli.js"), "-p", "say hello " + m, "--provider", "local", "--model", "m"}
			}},
		{"cn -p", "continue-cli", func(h, a, m string) []string { return realclients.ContinueSetup(h, a, m) },
			func(m string) []string {
				return []string{"node", filepath.Join(mods, "@continuedev", "cli", "dist", "cn.js"), "-p", "say hello " + m}
			}},
	} {
		t.Run(c.client, func(t *testing.T) {
			mark := "lvmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + strings.ReplaceAll(c.client, "-", "")
			model := realclients.StartModel(t)
			home, work := t.TempDir(), t.TempDir()
			pid, log := realclients.StartDetached(t, work, c.setup(home, model.Addr, mark), c.argv(mark)...)
			t.Cleanup(func() { realclients.KillOurs(mark) })
			deadline := time.Now().Add(clientDeadline())
			for model.Turns() == 0 {
				if time.Now().After(deadline) {
					b, _ := os.ReadFile(log)
					t.Fatalf("%s asked the model nothing within %s:\n%s", c.name, clientDeadline(), clitest.Tail(b, 3000))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if clitest.ParentOf(pid) != os.Getpid() {
				t.Fatalf("%s %d: its parent is %d, want this test (its shell gone)", c.name, pid, clitest.ParentOf(pid))
			}
			var ps struct {
				Sessions []struct {
					Client string `json:"client"`
					PID    int    `json:"pid"`
				} `json:"sessions"`
				Orphans []struct {
					RootPID int `json:"root_pid"`
				} `json:"orphans"`
			}
			r := clitest.RunReaper(t, nil, "ps", "--output", "json")
			if err := json.Unmarshal([]byte(r.Stdout), &ps); err != nil {
				t.Fatalf("ps: %v\n%s", err, r.Stdout)
			}
			session := false
			for _, s := range ps.Sessions {
				session = session || s.PID == pid && s.Client == c.client
			}
			for _, o := range ps.Orphans {
				if o.RootPID == pid {
					t.Errorf("%s %d, alive, is among ps's orphans", c.name, pid)
				}
			}
			if !session {
				t.Errorf("%s %d, alive: not a %s session in ps: %+v", c.name, pid, c.client, ps.Sessions)
			}
			var scan struct {
				Findings []struct {
					RootPID int `json:"root_pid"`
				} `json:"findings"`
				Unmatched []struct {
					RootPID int `json:"root_pid"`
				} `json:"unmatched_trees"`
			}
			r = clitest.RunReaper(t, nil, "scan", "--all", "--output", "json")
			json.Unmarshal([]byte(r.Stdout), &scan)
			for _, f := range append(scan.Findings, scan.Unmatched...) {
				if f.RootPID == pid {
					t.Errorf("%s %d, alive: a tree of scan --all:\n%s", c.name, pid, clipTo(r.Stdout, 3000))
				}
			}
			t.Logf("%s %d, reparented to this test, alive: a %s session in ps, in no finding", c.name, pid, c.client)
		})
	}
}

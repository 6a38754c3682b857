package realclients

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealCline: Cline 3.0.65 (`cline -i`, the native binary of its npm
// platform package) in its interactive UI as the foreground job of a bash
// on a terminal, with a stubborn stdio server. It starts the server itself
// and a hub daemon that sessions share (setsid, its own session). While it
// lives a reap holds nothing. SIGKILLed, it leaves the server (reparented,
// in cline's group: the control) and the hub; the reap kills the server as
// owner-dead by CLINE_CONNECTOR_CLI_LAUNCH and the group cline led, and
// leaves the hub: its lock verifies it, so it is no tree of the scan at
// all. The control for the hub: its lock moved away, it is a reparented
// tree that no rule signals.
func TestRealCline(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "clmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	model := realclients.StartModel(t)
	home, work := t.TempDir(), t.TempDir()
	bin := filepath.Join(mods, "@cline", "cli-linux-x64", "bin", "cline")
	env := realclients.ClineSetup(t, bin, home, work, model.Addr, mark, "stubborn")
	hubOf := func() int {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			var pid int
			if _, err := fmt.Sscan(e.Name(), &pid); err == nil && strings.Contains(clitest.CmdlineOf(pid), "--cline-hub-daemon --cwd "+work) {
				if s := clitest.StateOf(pid); s != "" && s != "Z" {
					return pid
				}
			}
		}
		return 0
	}
	t.Cleanup(func() {
		realclients.KillOurs(mark)
		if hub := hubOf(); hub > 0 && clitest.ParentOf(hub) == os.Getpid() {
			syscall.Kill(hub, syscall.SIGKILL)
		}
	})
	term := clitest.StartOnTerminal(t, work, clitest.OnTerminal(env), "bash", "--norc", "--noprofile", "-i")
	fmt.Fprintln(term.Master, bin+" -i")
	var server, hub int
	for deadline := time.Now().Add(clientDeadline()); server == 0 || hub == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("cline -i did not start its server and hub within the deadline: marked %v, hub %d; the screen:\n%s", realclients.MarkedPIDs(mark), hubOf(), term.Screen(3000))
		}
		if s := realclients.MarkedPIDs(mark); len(s) == 1 {
			server = s[0]
		}
		hub = hubOf()
	}
	cline := clitest.ParentOf(server)
	t.Logf("cline %d (%s), group %d; its server %d, group %d; the hub %d, session %d", cline, clitest.CmdlineOf(cline), clitest.PgidOf(cline), server, clitest.PgidOf(server), hub, clitest.PgidOf(hub))
	reapLive(t, mark, "cline -i")

	left := killClient(cline, mark)
	t.Logf("cline SIGKILLed, no reaper: %v alive (the server: parent %d); the hub %d: parent %d", left, clitest.ParentOf(server), hub, clitest.ParentOf(hub))
	if !slicesHas(left, server) || clitest.ParentOf(server) != os.Getpid() {
		t.Fatalf("control: the stubborn server did not outlive cline, reparented: alive %v", left)
	}
	if st := clitest.StateOf(hub); st == "" || st == "Z" {
		t.Fatalf("the hub %d did not outlive cline", hub)
	}
	reapLeftovers(t, mark, []int{server})
	if st := clitest.StateOf(hub); st == "" || st == "Z" {
		t.Errorf("the hub %d is gone after the reap", hub)
	}
	roots := func() map[int]string { return scanRoots(t, mark) }
	if why, ok := roots()[hub]; ok {
		t.Errorf("the hub %d, its lock verifying: a tree of the scan (%s), want owned", hub, why)
	}
	lock := filepath.Join(home, ".cline", "data", "locks", "hub", "production.json")
	if err := os.Rename(lock, lock+".moved"); err != nil {
		t.Fatal(err)
	}
	why := roots()[hub]
	t.Logf("the hub's lock moved away (the control): %q", why)
	if !strings.HasPrefix(why, "unmatched") {
		t.Errorf("control: the hub %d without its lock: %q, want an unmatched tree", hub, why)
	}
}

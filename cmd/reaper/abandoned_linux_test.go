package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestExampleReapsUnmarkedAbandoned: the MCP servers of a client that sets
// no marker — started through npm exec, uvx, and detached with setsid
// (adopted by this test, which stands in for systemd --user) — each with
// a pipe from the client as its stdin. Beside them: a live client's
// server whose wrapper exited (reparented, the client still holds its
// stdin), and a developer's own setsid'd server reading /dev/null.
//
// While the first client lives, the reap with the example policy signals
// nothing: its detached server is reparented but in use. The client is
// SIGKILLed; its servers live on (the control: sleep reads no stdin). The
// reap then kills the three as abandoned by mcp-abandoned — the kernel
// says no process can write to their stdin — on that proof alone, with no
// marker, ledger or state. The live client's server and the developer's
// server are left alive: in use, and reported only (mcp-orphaned).
func TestExampleReapsUnmarkedAbandoned(t *testing.T) {
	clitest.RequireRoot(t) // the stdin peer is proof only when every process's fds can be read
	clitest.BecomeSubreaper(t)
	mark := "abandmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	t.Cleanup(func() { realclients.KillOurs(mark) })
	// serve runs sleep under a server's name with the client's pipe as
	// its stdin (a process substitution's: the client holds the write end
	// as fd N). The server closes the client's other pipes, as a client's
	// close-on-exec pipes are closed: a sibling holding a server's stdin
	// would make it in use (fail closed), not abandoned.
	serve := func(fd int, name string) string {
		return fmt.Sprintf(`exec %d> >(exec 3>&- 4>&- 5>&-; exec -a "%s" sleep 300)`, fd, name)
	}
	dead := exec.Command("bash", "-c", strings.Join([]string{
		serve(3, "npm exec @modelcontextprotocol/server-filesystem /srv/"+mark),
		serve(4, "uvx mcp-server-git --repository /srv/"+mark),
		// Detached: setsid forks, so the server is this test's at once.
		fmt.Sprintf(`exec 5> >(exec 3>&- 4>&- 5>&-; exec setsid -f bash -c 'exec -a "%s-mcp-server --detached" sleep 300')`, mark),
		"exec -a " + mark + "-client sleep 300",
	}, "\n"))
	live := exec.Command("bash", "-c", strings.Join([]string{
		// Its wrapper exits at once; the server it started keeps the
		// client's pipe (a background job's stdin is /dev/null unless
		// given).
		fmt.Sprintf(`exec 3> >(exec 4<&0; (exec -a "npm exec @modelcontextprotocol/server-memory %s-live" sleep 300 <&4 4<&-) & exit 0)`, mark),
		"exec -a " + mark + "-liveclient sleep 300",
	}, "\n"))
	dev := exec.Command("setsid", "-f", "bash", "-c", fmt.Sprintf(`exec -a "%s-mcp-server --dev" sleep 300`, mark))
	dev.Stdin = nil // /dev/null
	for _, c := range []*exec.Cmd{dead, live, dev} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { dead.Process.Kill(); live.Process.Kill(); dead.Wait(); live.Wait() })
	dev.Wait() // setsid -f returns once it has forked

	// A server by the start of its command line: the clients' shells hold
	// every server's name in theirs until they exec (and so do the
	// subshells that become the servers), so a match anywhere in it once
	// took a client's pid for a server's.
	find := func(prefix string) int {
		for _, pid := range realclients.MarkedPIDs(mark) {
			if strings.HasPrefix(clitest.CmdlineOf(pid), prefix) {
				return pid
			}
		}
		return 0
	}
	names := map[string]string{
		"npx":      "npm exec @modelcontextprotocol/server-filesystem",
		"uvx":      "uvx mcp-server-git",
		"detached": mark + "-mcp-server --detached",
		"live":     "npm exec @modelcontextprotocol/server-memory",
		"dev":      mark + "-mcp-server --dev",
	}
	pids := map[string]int{}
	clitest.WaitFor(t, func() bool {
		for k, what := range names {
			if pids[k] = find(what); pids[k] == 0 {
				return false
			}
		}
		return clitest.ParentOf(pids["live"]) == os.Getpid() && clitest.ParentOf(pids["detached"]) == os.Getpid() && clitest.ParentOf(pids["dev"]) == os.Getpid()
	}, "the servers to start, and the live one's wrapper to exit")
	t.Logf("servers %v", pids)
	ours := clitest.ExamplePolicy(t, mark)

	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", ours)
	if n := rep.Count("killed"); n != 0 {
		t.Fatalf("both clients live: %d killed\n%s", n, r.Stdout)
	}
	for k, pid := range pids {
		if !clitest.Alive(pid) {
			t.Fatalf("both clients live: %s server %d is gone", k, pid)
		}
	}

	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()
	gone := []string{"npx", "uvx", "detached"}
	clitest.WaitFor(t, func() bool {
		for _, k := range gone {
			if clitest.ParentOf(pids[k]) != os.Getpid() {
				return false
			}
		}
		return true
	}, "the dead client's servers to be reparented to this test")
	time.Sleep(200 * time.Millisecond)
	for _, k := range gone {
		if !clitest.Alive(pids[k]) {
			t.Fatalf("control: the %s server died with its client (it must outlive it for the reap to prove anything)", k)
		}
	}

	rep, r = clitest.ReapJSONEnv(t, nil, "--policy", ours)
	for _, k := range gone {
		f := rep.Finding(pids[k])
		if f == nil || f.Outcome != "killed" || f.Rule != "mcp-abandoned" || !clitest.Contains(f.Reasons, "abandoned") {
			t.Errorf("the dead client's %s server: %+v; want killed as abandoned by mcp-abandoned\n%s", k, f, r.Stderr)
			continue
		}
		t.Logf("%s: %v by %s: %s", k, f.Reasons, f.Rule, f.Evidence)
	}
	if f := rep.Finding(pids["live"]); f != nil || !clitest.Alive(pids["live"]) {
		t.Errorf("the live client's server: %+v, alive %v; want no finding (in use)", f, clitest.Alive(pids["live"]))
	}
	if f := rep.Finding(pids["dev"]); f == nil || f.Rule != "mcp-orphaned" || f.Outcome == "killed" || !clitest.Alive(pids["dev"]) {
		t.Errorf("the developer's server: %+v, alive %v; want reported by mcp-orphaned, alive", f, clitest.Alive(pids["dev"]))
	}
	for _, k := range gone {
		pid := pids[k]
		clitest.WaitFor(t, func() bool { return !clitest.Alive(pid) }, "the "+k+" server to be gone")
	}
}

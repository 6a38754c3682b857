package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// Issue 52, item 9: explain on a live Claude Code session's MCP server
// said "not-orphaned: … a service, a login session or a protected
// process", which is true of the session's tree and says nothing of whose
// it is. The session is named first: its client, its id, its pid and
// state — and then not the generic sentence (issue 64, item 12). The
// control: an adopted process of no session is not said to be one's.
func TestExplainNamesTheSession(t *testing.T) {
	// As an ordinary user, the test's own processes sit in a tree of
	// root's that the harness's PID 1 adopted: explain calls the session
	// another user's orphan, out of its scope, before any session is
	// asked about. As root the tree is the reaper's own.
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("explainsess%d", os.Getpid())
	home := t.TempDir()
	session := "s-explain-" + clitest.Mark
	owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, "npm exec mcp-remote https://"+mark), nil)
	server := childWith(t, owner, mark, "the session's server")
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	writeSession(t, home, owner, session)
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}
	explain := func(pid int) (verdict, why string) {
		r := clitest.RunReaper(t, env, "explain", strconv.Itoa(pid), "-o", "json")
		var e struct{ Verdict, Why string }
		if err := json.Unmarshal([]byte(r.Stdout), &e); err != nil {
			t.Fatalf("explain %d: exit %d, %v\n%s%s", pid, r.Code, err, r.Stdout, r.Stderr)
		}
		return e.Verdict, e.Why
	}
	if v, why := explain(server); v != "not-orphaned" || !strings.Contains(why, "live Claude Code session "+session) || !strings.Contains(why, fmt.Sprintf("pid %d", owner)) {
		t.Errorf("the live session's server: %s, %q; want the session named", v, why)
	} else if strings.Contains(why, "a service, a login session") {
		t.Errorf("the live session's server: %q; want the session alone, not the generic sentence", why)
	}
	if _, why := explain(os.Getpid()); strings.Contains(why, "a process of the live") {
		t.Errorf("control, the test itself: %q names a session", why)
	}
}

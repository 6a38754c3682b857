package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// declaredPolicy declares agentx, a client reaper ships no adapter for,
// recognised by mark; with sessions, its session files too. Its rule
// terminates what is owner-dead of it, confined to mark.
func declaredPolicy(t *testing.T, mark string, sessions bool) string {
	t.Helper()
	keys := ""
	if sessions {
		keys = `session_files = "~/.agentx/sessions/*.json"
session_started = "startedAt"
session_env = "AGENTX_SESSION"
session_id = "sessionId"`
	}
	return clitest.WritePolicy(t, fmt.Sprintf(`version = 1
[defaults]
min_age = "0s"
grace = "2s"

%s
[[client]]
name = "agentx"
command = '%s-client'
%s

[[rule]]
name = "agentx-dead"
when = ["owner-dead"]
owner = ["agentx"]
cmdline = '%s'
action = "terminate"
`, clitest.SelfSubreaper(t), mark, keys, mark))
}

// TestDeclaredClientSessions: a client reaper ships no adapter for keeps a
// file per session naming its pid and the session id it puts on what it
// spawns (AGENTX_SESSION), and marks nothing else. SIGKILLed, it leaves
// its server running, reparented to this test. With the client's session
// files declared, the session file proves the server's owner gone: the
// reap kills it as owner-dead, naming the file. The control, first: the
// same client declared without its session files — the server is only
// reparented and untracked, the rule takes nothing, and it lives.
//
// The state dir is in a home any user may write to, so even a root
// reaper reads it in a reader child (no dir root reads in its own process
// is one another user could have made), which is told the declared
// client by its spec.
func TestDeclaredClientSessions(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := "declmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	home, err := os.MkdirTemp("", "reaper-declared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o777)
	sessions := filepath.Join(home, ".agentx", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	// The client: it writes its session file, then starts its server with
	// the session's id, and waits.
	script := fmt.Sprintf(`id=s-$$-%s
printf '{"pid": %%d, "sessionId": "%%s", "startedAt": %%s}' $$ "$id" "$(date +%%s%%3N)" > %q/$$.json
AGENTX_SESSION=$id bash -c 'exec -a %s-server sleep 300' </dev/null >/dev/null 2>&1 &
echo $!
wait`, mark, sessions, mark)
	client := exec.Command("bash", "-c", "exec -a "+mark+"-client bash -c \"$0\"", script)
	client.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := client.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Process.Kill(); client.Wait() })
	var server int
	if _, err := fmt.Fscan(out, &server); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clitest.KillTreeVerified(server) })
	clitest.WaitFor(t, func() bool { return strings.HasPrefix(clitest.CmdlineOf(server), mark+"-server") }, "the server to start")
	if _, err := os.Stat(filepath.Join(sessions, fmt.Sprintf("%d.json", client.Process.Pid))); err != nil {
		t.Fatalf("the client wrote no session file: %v", err)
	}
	env := []string{"HOME=" + home}

	// While the client lives, its server is its child: no finding.
	live, r := clitest.ReapJSONEnv(t, env, "--policy", declaredPolicy(t, mark, true))
	if f := live.Finding(server); f != nil || !clitest.Alive(server) {
		t.Fatalf("the client lives: finding %+v, alive %v\n%s", f, clitest.Alive(server), r.Stderr)
	}

	client.Process.Signal(syscall.SIGKILL)
	client.Wait()
	clitest.WaitFor(t, func() bool { return clitest.ParentOf(server) == os.Getpid() }, "the server to be reparented to this test")

	control := declaredPolicy(t, mark, false)
	rep, r := clitest.ReapJSONEnv(t, env, "--policy", control)
	if f := rep.Finding(server); f != nil || !clitest.Alive(server) {
		t.Fatalf("control, no session files declared: finding %+v, alive %v; want no rule to take it\n%s", f, clitest.Alive(server), r.Stderr)
	}
	ex := clitest.RunReaper(t, env, "explain", fmt.Sprint(server), "--policy", control)
	if !strings.Contains(ex.Stdout, "reasons: reparented, untracked\n") {
		t.Fatalf("control: explain does not show it untracked:\n%s%s", ex.Stdout, ex.Stderr)
	}

	rep, r = clitest.ReapJSONEnv(t, env, "--policy", declaredPolicy(t, mark, true))
	f := rep.Finding(server)
	if f == nil || f.Outcome != "killed" || !clitest.Contains(f.Reasons, "owner-dead") {
		t.Fatalf("session files declared: finding %+v, want killed as owner-dead\n%s\n%s", f, r.Stdout, r.Stderr)
	}
	if ev := strings.Join(f.Evidence, "; "); !strings.Contains(ev, "the session file "+sessions) || !strings.Contains(ev, "AGENTX_SESSION=s-") {
		t.Errorf("evidence %q: want the session file and the variable", ev)
	}
	clitest.WaitFor(t, func() bool { return !clitest.Alive(server) }, "the server to be gone")
	t.Logf("%v: %s", f.Reasons, f.Evidence)
}

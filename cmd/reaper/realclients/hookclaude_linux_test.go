package realclients

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
	"github.com/orphanreaper/reaper/setup"
)

// hookUID is the laptop user of TestRealClaudeHook: a uid no other test
// and no account uses, so every process of it is this test's.
const hookUID = 61234

// TestRealClaudeHook: the session-start hook `reaper hook install
// claude-code` writes, run by the real Claude Code 2.1.197 as an ordinary
// user would have it: that user's own reaper (per-user scope, the user's
// policy in ~/.config/reaper: the shipped example, its rules confined to
// this test's mark), started by claude itself. A first session is
// SIGKILLed and leaves its two stubborn servers (the control: alive two
// seconds later, reparented). A second session starts: its hook's reap
// kills the first session's servers as owner-dead, keeps the second's,
// and logs to the user's own audit log. The control subtest is the same
// without the hook: the second session leaves the first's servers alone.
func TestRealClaudeHook(t *testing.T) {
	clitest.RequireRoot(t)
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	for _, hooked := range []bool{false, true} {
		name := map[bool]string{false: "control: no hook", true: "hook installed"}[hooked]
		t.Run(name, func(t *testing.T) {
			base := "chmark" + strings.ReplaceAll(clitest.Mark, "-", "x") + map[bool]string{false: "c", true: "h"}[hooked]
			u := newHookUser(t, mods, base)
			if hooked {
				out := u.run(t, "hook", "install", "claude-code")
				settings, _ := os.ReadFile(filepath.Join(u.cfgDir, "settings.json"))
				if !bytes.Contains(settings, []byte(setup.HookMark)) || !bytes.Contains(settings, []byte("SessionStart")) {
					t.Fatalf("hook install wrote no SessionStart entry:\n%s\n%s", out, settings)
				}
				t.Logf("reaper hook install claude-code, as uid %d:\n%s%s", hookUID, out, settings)
			}

			first, firstServers := u.session(t, base+"a")
			left := killClient(first, base+"a")
			if len(left) != len(firstServers) {
				t.Fatalf("control: the stubborn servers did not outlive the first claude: %v of %v", left, firstServers)
			}
			t.Logf("first claude %d SIGKILLed: its servers %v live on, reparented", first, left)

			second, secondServers := u.session(t, base+"b")
			t.Cleanup(func() { killClient(second, base+"b") })
			if !hooked {
				// What the hook's reap takes, were there one: its grace
				// for servers that ignore SIGTERM is in it.
				waitGone(t, firstServers, true)
				return
			}
			waitGone(t, firstServers, false)
			for _, pid := range secondServers {
				if !clitest.Alive(pid) {
					t.Errorf("the second session's server %d died: the hook reaped a live session", pid)
				}
			}
			// The hook's reap runs on in the background: its audit record
			// is written once the reap is done, which may be after the
			// servers are gone.
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				b, _ := os.ReadFile(u.auditPath())
				named := true
				for _, pid := range firstServers {
					named = named && strings.Contains(string(b), fmt.Sprintf(`"pid":%d`, pid))
				}
				if named {
					break
				}
			}
			log := u.auditLog(t)
			for _, pid := range firstServers {
				if !strings.Contains(log, fmt.Sprintf(`"pid":%d`, pid)) {
					t.Errorf("the user's audit log does not name server %d:\n%s", pid, log)
				}
			}
			t.Logf("second claude %d started: its hook's reap killed the first session's servers %v and kept its own %v", second, firstServers, secondServers)
		})
	}
}

// hookUser is a laptop user made for one test: a home, a workspace, and
// the client, the reaper and the stubborn server in a directory the user
// can reach (root's own homes and the test's temp dirs are closed to it).
type hookUser struct {
	home, work, cfgDir, bin string
	claude, reaper, script  string
	model                   *realclients.Model
	env                     []string
}

func newHookUser(t *testing.T, mods, base string) *hookUser {
	t.Helper()
	top, err := os.MkdirTemp("", "reaper-hook-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	u := &hookUser{home: filepath.Join(top, "home"), work: filepath.Join(top, "work"), bin: filepath.Join(top, "bin")}
	for _, d := range []string{u.home, u.work, u.bin} {
		os.Mkdir(d, 0o755)
	}
	u.claude = filepath.Join(u.bin, "claude")
	if err := os.Link(filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), u.claude); err != nil {
		copyExecutable(t, filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"), u.claude)
	}
	u.reaper = filepath.Join(u.bin, "reaper")
	copyExecutable(t, clitest.Bin, u.reaper)
	stubborn := realclients.StubbornServers(base)["stubborn"][1]
	u.script = filepath.Join(u.bin, "stubborn-mcp.mjs")
	copyExecutable(t, stubborn, u.script)
	os.Chmod(top, 0o755)

	u.model = realclients.StartModel(t)
	env, cfgDir := realclients.ClaudeSetup(u.home, u.work, u.model.Addr, base)
	u.cfgDir = cfgDir
	u.env = append(env, "XDG_CONFIG_HOME="+filepath.Join(u.home, ".config"), "XDG_RUNTIME_DIR="+filepath.Join(u.home, "run"),
		"XDG_STATE_HOME="+filepath.Join(u.home, ".local", "state"))
	os.MkdirAll(filepath.Join(u.home, "run"), 0o700)
	pol, err := os.ReadFile(clitest.ExamplePolicy(t, base))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(u.home, ".config", "reaper"), 0o700)
	if err := os.WriteFile(filepath.Join(u.home, ".config", "reaper", "policy.toml"), pol, 0o600); err != nil {
		t.Fatal(err)
	}
	// Everything under the home is the user's, as on a laptop.
	filepath.Walk(u.home, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, hookUID, hookUID) })
	os.Chown(u.work, hookUID, hookUID)
	t.Cleanup(func() { killUID(hookUID) })
	return u
}

// setup writes the session's config — its stubborn servers carry mark —
// as the user's own.
func (u *hookUser) setup(t *testing.T, mark string) {
	t.Helper()
	realclients.ClaudeSetup(u.home, u.work, u.model.Addr, mark)
	cfg := filepath.Join(u.cfgDir, ".claude.json")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stubborn := realclients.StubbornServers(mark)["stubborn"][1]
	b = bytes.ReplaceAll(b, []byte(stubborn), []byte(u.script))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Lchown(cfg, hookUID, hookUID)
}

// session starts `claude -p` as the user, detached, and waits for it and
// its two servers; it returns claude's pid and the servers'.
func (u *hookUser) session(t *testing.T, mark string) (int, []int) {
	t.Helper()
	u.setup(t, mark)
	claude, log := realclients.StartDetached(t, u.work, u.env, u.as(u.claude, "-p", "say hello "+mark)...)
	t.Cleanup(func() { realclients.KillOurs(mark) })
	waitMarked(t, mark, 3, u.model, log)
	var servers []int
	for _, pid := range realclients.MarkedPIDs(mark) {
		if pid != claude {
			servers = append(servers, pid)
			if uid := uidOf(pid); uid != hookUID {
				t.Fatalf("server %d runs as uid %d, want %d", pid, uid, hookUID)
			}
		}
	}
	return claude, servers
}

// as is argv run as the user (setpriv execs it: the pid stays the one
// started).
func (u *hookUser) as(argv ...string) []string {
	id := strconv.Itoa(hookUID)
	return append([]string{"setpriv", "--reuid", id, "--regid", id, "--clear-groups", "--"}, argv...)
}

// run runs the user's reaper with args and returns its output.
func (u *hookUser) run(t *testing.T, args ...string) string {
	t.Helper()
	argv := u.as(append([]string{u.reaper}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = u.home, u.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reaper %v as uid %d: %v\n%s", args, hookUID, err, out)
	}
	return string(out)
}

// auditLog is the user's audit log, where a user's reap writes by default.
func (u *hookUser) auditLog(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(u.auditPath())
	if err != nil {
		t.Fatalf("the user's audit log: %v", err)
	}
	return string(b)
}

// waitGone waits up to 30 s for pids to end; with survive it checks
// instead that they live through what a hook's reap would take (the
// example policy's grace, 5 s, and a margin).
func waitGone(t *testing.T, pids []int, survive bool) {
	t.Helper()
	anyAlive := func() bool { return slices.ContainsFunc(pids, clitest.Alive) }
	if survive {
		time.Sleep(10 * time.Second)
		for _, pid := range pids {
			if !clitest.Alive(pid) {
				t.Fatalf("control: server %d died with no hook", pid)
			}
		}
		t.Logf("control: no hook, and the first session's servers %v live on after the second session started", pids)
		return
	}
	for deadline := time.Now().Add(30 * time.Second); anyAlive(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's reap did not end the first session's servers %v within 30 s", pids)
		}
	}
}

// uidOf is pid's real uid, or -1.
func uidOf(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			if fields := strings.Fields(rest); len(fields) > 0 {
				uid, _ := strconv.Atoi(fields[0])
				return uid
			}
		}
	}
	return -1
}

// killUID SIGKILLs every process of uid, which only this test uses.
func killUID(uid int) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && uidOf(pid) == uid {
			clitest.KillTreeVerified(pid)
		}
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// auditPath is the user's own audit log.
func (u *hookUser) auditPath() string {
	return filepath.Join(u.home, ".local", "state", "log", "reaper", "audit.jsonl")
}

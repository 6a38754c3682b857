package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"

	"github.com/orphanreaper/reaper/audit"
)

// The attacks of docs/threat-model.md ("The attacks, each with its
// test": a user's files against a root reaper), each with real processes
// and real files, each with its control: the same evidence in a file of
// the victim's own user (or root's) does act, so the test would fail if
// the speaker rule were gone.
// User A is nobody (65534); user B is uid 65533, which has no account.

var userB = &syscall.Credential{Uid: 65533, Gid: 65533}

// stateOwnedBy makes an OpenClaw state dir (state/, acpx/) owned by uid,
// in a directory every user can reach.
func stateOwnedBy(t *testing.T, uid uint32) string {
	t.Helper()
	dir := filepath.Join(sharedDir(t, 0o755), "openclaw")
	for _, d := range []string{dir, filepath.Join(dir, "state"), filepath.Join(dir, "acpx")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chownAll(t, dir, uid)
	return dir
}

// chownAll gives dir and everything below it to uid.
func chownAll(t *testing.T, dir string, uid uint32) {
	t.Helper()
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, int(uid), int(uid))
		}
		return nil
	})
}

// writeRegistryStore writes state/openclaw.sqlite with plugin state rows
// (plugin, namespace, key, value), owned by uid.
func writeRegistryStore(t *testing.T, dir string, uid uint32, rows ...[4]string) {
	t.Helper()
	path := filepath.Join(dir, "state", "openclaw.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE plugin_state_entries (plugin_id TEXT, namespace TEXT, entry_key TEXT, value_json TEXT)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO plugin_state_entries VALUES (?, ?, ?, ?)`, r[0], r[1], r[2], r[3]); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	chownAll(t, dir, uid)
}

// identity is pid's start identity as OpenClaw writes it: boot_id:ticks.
func ocIdentity(t *testing.T, pid int) string {
	t.Helper()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	ticks, ok := clitest.StartTicks(pid)
	if !ok {
		t.Fatalf("pid %d is gone", pid)
	}
	return fmt.Sprintf("%s:%d", strings.TrimSpace(string(boot)), ticks)
}

// deadPID is a pid no process has.
func deadPID(t *testing.T) int {
	for pid := 4_000_000; pid > 3_000_000; pid -= 7919 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			return pid
		}
	}
	t.Fatal("no free pid")
	return 0
}

// workerUnderLiveParent starts a root process, marked, under a live root
// parent that the suite adopted: without evidence it is no finding at all.
func workerUnderLiveParent(t *testing.T, name string) int {
	t.Helper()
	parent := adopt(t, "master-"+clitest.Mark, fmt.Sprintf("(exec -a %q sleep 600) & wait", name), nil)
	return childWith(t, parent, name, "the worker")
}

// childWith waits for a child of parent whose command line holds text,
// and returns its pid.
func childWith(t *testing.T, parent int, text, what string) int {
	t.Helper()
	return childMatching(t, parent, func(line string) bool { return strings.Contains(line, text) }, what)
}

// childMatching waits for a child of parent whose command line match
// takes, and returns its pid.
func childMatching(t *testing.T, parent int, match func(string) bool, what string) int {
	t.Helper()
	var pid int
	clitest.WaitFor(t, func() bool {
		for _, c := range clitest.ChildrenOf(parent) {
			if match(clitest.CmdlineOf(c)) {
				pid = c
				return true
			}
		}
		return false
	}, what)
	return pid
}

// registryRow is a codex app-server registry row naming child, with the
// parent given.
func registryRow(t *testing.T, parent, child int, parentStart string) [4]string {
	v, _ := json.Marshal(map[string]any{
		"parent": map[string]any{"pid": parent, "pgid": parent, "startedAt": parentStart},
		"child":  map[string]any{"pid": child, "pgid": child, "startedAt": ocIdentity(t, child)},
	})
	return [4]string{"codex", "app-server-processes", "row-" + clitest.Mark, string(v)}
}

// Attack 1: user A's registry row names a root worker (under a live root
// parent) as the child of a dead parent. With the example policy, root's
// reaper once SIGTERMed the worker as owner-dead. The same row in root's
// own state dir is the control: it does make the worker owner-dead.
func TestAttackRegistryRowCannotKillRoot(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	for _, tt := range []struct {
		name    string
		speaker uint32
		killed  bool
	}{{"user A's row", 65534, false}, {"control: root's row", 0, true}} {
		t.Run(tt.name, func(t *testing.T) {
			mark := fmt.Sprintf("udevd-%s-%d", clitest.Mark, tt.speaker)
			worker := workerUnderLiveParent(t, "/lib/systemd/systemd-"+mark)
			if tt.speaker != 0 {
				runAs(t, tt.speaker) // a user's state is read when they own a process
			}
			state := stateOwnedBy(t, tt.speaker)
			writeRegistryStore(t, state, tt.speaker, registryRow(t, deadPID(t), worker, "x:1"))
			rep, r := clitest.ReapJSONEnv(t, []string{"OPENCLAW_STATE_DIR=" + state}, "--policy", clitest.ExamplePolicy(t, mark))
			if f := rep.Finding(worker); tt.killed != (f != nil && f.Outcome == "killed") {
				t.Errorf("worker %d: finding %+v, killed want %v\n%s", worker, f, tt.killed, r.Stderr)
			}
			if alive := clitest.StateOf(worker) != ""; alive == tt.killed {
				t.Errorf("worker %d alive %v, want %v", worker, alive, !tt.killed)
			}
			if !tt.killed && !strings.Contains(r.Stdout, "state of uid 65534") {
				t.Errorf("the dropped claim is not reported:\n%s", r.Stdout)
			}
		})
	}
}

// Attack 2: user A's registry row whose parent is a live process of A's
// makes a root orphan "owned": no finding, and it lives on. Now A's row is
// not A's to make about root's process, and a rule that terminates what is
// reparented kills it. The control: the same row in root's own state, its
// parent a live process of root's, does make it owned — spared.
func TestAttackRegistryRowCannotShieldRoot(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	for _, tt := range []struct {
		name    string
		speaker uint32
		killed  bool
	}{{"user A's row", 65534, true}, {"control: root's row", 0, false}} {
		t.Run(tt.name, func(t *testing.T) {
			mark := fmt.Sprintf("shield-%s-%d", clitest.Mark, tt.speaker)
			orphan := adopt(t, "codex app-server "+mark, "sleep 600; exit 0", nil)
			var as *syscall.Credential
			if tt.speaker != 0 {
				as = nobody
			}
			parent := adopt(t, "helper-"+mark, "sleep 600; exit 0", as)
			state := stateOwnedBy(t, tt.speaker)
			writeRegistryStore(t, state, tt.speaker, registryRow(t, parent, orphan, ocIdentity(t, parent)))
			rep, r := clitest.ReapJSONEnv(t, []string{"OPENCLAW_STATE_DIR=" + state}, "--policy", markedPolicy(t, "codex app-server "+mark, `"reparented"`))
			if f := rep.Finding(orphan); tt.killed != (f != nil && f.Outcome == "killed") {
				t.Errorf("root's orphan %d: %+v, killed want %v\n%s", orphan, f, tt.killed, r.Stderr)
			}
			if st := clitest.StateOf(orphan); (st != "" && st != "Z") == tt.killed { // a zombie until this test, its adopter, reaps it
				t.Errorf("root's orphan %d: state %q, killed want %v", orphan, st, tt.killed)
			}
			if clitest.StateOf(parent) != "S" {
				t.Errorf("the row's parent %d: state %q, want untouched", parent, clitest.StateOf(parent))
			}
		})
	}
}

// Attack 3: user A's lease file names, closed, a root process whose argv
// carries the lease id: run-done, terminated. Control: root's lease file.
func TestAttackLeaseCannotKillRoot(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	for _, tt := range []struct {
		name    string
		speaker uint32
		killed  bool
	}{{"user A's lease", 65534, false}, {"control: root's lease", 0, true}} {
		t.Run(tt.name, func(t *testing.T) {
			lease := fmt.Sprintf("L-%s-%d", clitest.Mark, tt.speaker)
			// The wrapper's parent must show neither the lease nor an
			// agent's name, or it would be a finding of its own: the
			// wrapper's command is in a script file.
			script := filepath.Join(sharedDir(t, 0o755), "wrapper.sh")
			os.WriteFile(script, []byte(fmt.Sprintf("exec -a claude-agent-acp bash -c 'sleep 600; exit 0' --openclaw-acpx-lease-id %s\n", lease)), 0o755)
			parent := adopt(t, "master", fmt.Sprintf("bash %s & wait", script), nil)
			wrapper := childWith(t, parent, lease, "the wrapper")
			state := stateOwnedBy(t, tt.speaker)
			doc := fmt.Sprintf(`{"version":1,"leases":[{"leaseId":%q,"rootPid":%d,"state":"closed","startedAt":%d}]}`, lease, wrapper, time.Now().UnixMilli())
			path := filepath.Join(state, "acpx", "process-leases.json")
			os.WriteFile(path, []byte(doc), 0o644)
			os.Chown(path, int(tt.speaker), int(tt.speaker))
			rep, r := clitest.ReapJSONEnv(t, []string{"OPENCLAW_STATE_DIR=" + state}, "--policy", clitest.ExamplePolicy(t, lease))
			if f := rep.Finding(wrapper); tt.killed != (f != nil && f.Outcome == "killed") {
				t.Errorf("wrapper %d: %+v, killed want %v\n%s", wrapper, f, tt.killed, r.Stderr)
			}
			if alive := clitest.StateOf(wrapper) != ""; alive == tt.killed {
				t.Errorf("wrapper %d alive %v, want %v", wrapper, alive, !tt.killed)
			}
		})
	}
}

// Attack 4: user A plants a lock in /tmp/openclaw-<uid of B>/: B's own
// reaper once refused B's orphan (doubt) and exited 3. Now the file — in
// a directory A owns — is skipped and reported, and B's orphan is reaped.
func TestAttackForeignLockDirCannotVeto(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	lockDir := fmt.Sprintf("/tmp/openclaw-%d", userB.Uid)
	if _, err := os.Lstat(lockDir); err == nil {
		skips.Skipf(t, "%s exists on this machine: not the test's to replace", lockDir)
	}
	if err := os.Mkdir(lockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(lockDir) })
	lock := filepath.Join(lockDir, "gateway.attack.lock")
	os.WriteFile(lock, []byte(fmt.Sprintf(`{"pid": %d, "createdAt": %q}`, os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0o644)
	chownAll(t, lockDir, 65534)
	state := stateOwnedBy(t, userB.Uid)
	home := sharedDir(t, 0o755)
	os.Chown(home, int(userB.Uid), int(userB.Gid))
	url := "https://lockveto-" + clitest.Mark + ".test"
	orphan := adopt(t, "npm exec mcp-remote "+url, "sleep 60; exit 0", userB)
	pol := filepath.Join(home, "policy.toml")
	os.WriteFile(pol, []byte(fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n[[rule]]\nname = \"b\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), regexp.QuoteMeta(url))), 0o644)
	r := runReaperAs(t, userB, []string{"HOME=" + home, "OPENCLAW_STATE_DIR=" + state, "XDG_RUNTIME_DIR=", "TMPDIR=/tmp"}, // the lock dir is below os.tmpdir()
		"reap", "--output", "json", "--policy", pol, "--lock-file", filepath.Join(home, "lock"))
	var rep clitest.ReapReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("B's reap: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if f := rep.Finding(orphan); f == nil || f.Outcome != "killed" || r.Code != 0 {
		t.Errorf("B's orphan: %+v, exit %d; want killed, exit 0: A's lock dir is not B's word\n%s", f, r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, lockDir+": owned by uid 65534") {
		t.Errorf("the foreign lock dir is not reported:\n%s", r.Stdout)
	}
}

// runReaperAs runs the reaper binary as cred with env added.
func runReaperAs(t *testing.T, cred *syscall.Credential, env []string, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command(clitest.Bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return clitest.RunCmd(t, cmd)
}

// runReaperWithAccounts runs the reaper binary in a private mount
// namespace whose /etc/passwd adds the given lines: how a test gives a
// user a home the root reaper discovers, as a container's passwd would,
// without touching this machine's.
func runReaperWithAccounts(t *testing.T, lines []string, env []string, args ...string) clitest.Result {
	t.Helper()
	host, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	passwd := filepath.Join(t.TempDir(), "passwd")
	os.WriteFile(passwd, append(host, []byte(strings.Join(lines, "\n")+"\n")...), 0o644)
	return runReaperBound(t, passwd, "/etc/passwd", env, args...)
}

// runReaperBound runs the reaper binary in a private mount namespace in
// which src is bind-mounted on dst (a file on a file, a dir on a dir).
func runReaperBound(t *testing.T, src, dst string, env []string, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", `mount --bind "$0" "$1" && shift && exec "$@"`, src, dst, clitest.Bin}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run reaper in a mount namespace: %v", err)
	}
	return clitest.Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// hostileStore writes a SQLite store at path, owned by uid, from sql.
func hostileStore(t *testing.T, path string, uid uint32, stmts ...string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// The hostile stores of attacks 5 and 6: a plugin state table with a
// VIRTUAL column of printf('%.*c', 20000000, …); a task_runs that is a
// view over an endless recursive CTE; and, beside a valid task store, an
// agent store whose session_nodes view computes five 200 MB values.
var (
	generatedStore = []string{
		`CREATE TABLE plugin_state_entries (plugin_id TEXT, namespace TEXT, entry_key TEXT, v TEXT,
			value_json TEXT GENERATED ALWAYS AS (printf('%.*c', 20000000, 'x')) VIRTUAL)`,
		`INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, v) VALUES ('acpx', 'process-leases', 'k', '')`,
	}
	endlessTaskStore = []string{
		`CREATE TABLE plugin_state_entries (plugin_id TEXT, namespace TEXT, entry_key TEXT, value_json TEXT)`,
		`CREATE VIEW task_runs AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c)
			SELECT i AS task_id, '' AS source_id, '' AS requester_session_key, 'x' AS task, 'running' AS status, i AS created_at, 'exec' AS task_kind FROM c`,
	}
	plainTaskStore = []string{
		`CREATE TABLE plugin_state_entries (plugin_id TEXT, namespace TEXT, entry_key TEXT, value_json TEXT)`,
	}
	bombSessionStore = []string{
		`CREATE VIEW session_nodes AS SELECT printf('%.*c', 200000000, 'x') AS session_key, NULL AS archived_at
			FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5)`,
	}
)

// Attacks 5 and 6: user A fills the 20 state dirs one home may have
// (~/.openclaw, 16 profiles, 3 legacy names) with 40 small stores that
// cost seconds or gigabytes to read. Once each cost its 2 s bound in the
// root reaper, one after another, and every run ended at --timeout (exit
// 1), signalling nothing for anyone; three of them took the reaper to
// 2.4-3.1 GB. Now A's stores are refused (their SQL is A's to write, not
// reaper's to run) in a reader running as A, A's trees alone are held
// back, and root's and B's orphans are reaped in the same run.
func TestAttackHostileStoresCannotVetoEveryone(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	home := sharedDir(t, 0o755)
	names := []string{".openclaw", ".clawdbot", ".moldbot", ".moltbot"}
	for i := 0; i < 16; i++ {
		names = append(names, fmt.Sprintf(".openclaw-p%02d", i))
	}
	size := int64(0)
	for i, n := range names {
		dir := filepath.Join(home, n)
		task := [][]string{generatedStore, endlessTaskStore, plainTaskStore}[i%3]
		hostileStore(t, filepath.Join(dir, "state", "openclaw.sqlite"), 65534, task...)
		hostileStore(t, filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite"), 65534, bombSessionStore...)
	}
	chownAll(t, home, 65534)
	filepath.Walk(home, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	mark := "hostile-" + clitest.Mark
	roots := adopt(t, "npm exec mcp-remote https://root-"+mark, "sleep 600; exit 0", nil)
	bs := adopt(t, "npm exec mcp-remote https://b-"+mark, "sleep 600; exit 0", userB)
	as := adopt(t, "npm exec mcp-remote https://a-"+mark, "sleep 600; exit 0", nobody)
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n[[rule]]\nname = \"all\"\nwhen = [\"reparented\"]\ncmdline = '%s'\nuser = [\"0\", \"65533\", \"65534\"]\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), regexp.QuoteMeta(mark)))
	start := time.Now()
	r := runReaperWithAccounts(t, []string{"attacker:x:65534:65534::" + home + ":/bin/sh"}, nil,
		"reap", "--output", "json", "--journal", "off", "--timeout", "40s", "--policy", pol, "--lock-file", filepath.Join(t.TempDir(), "lock"))
	took := time.Since(start)
	var rep clitest.ReapReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("reap: exit %d after %s, %v\n%s", r.Code, took, err, r.Stderr)
	}
	t.Logf("%d stores in %d state dirs, %d KiB in all: the run took %s, exit %d", 2*len(names), len(names), size>>10, took.Round(time.Millisecond), r.Code)
	if r.Code != audit.ExitPartial {
		t.Errorf("exit %d, want 3 (A's tree refused for A's unreadable state; not 1: the run must not end at its deadline)\n%s", r.Code, r.Stderr)
	}
	for _, pid := range []int{roots, bs} {
		if f := rep.Finding(pid); f == nil || f.Outcome != "killed" {
			t.Errorf("orphan %d: %+v, want killed: A's stores speak for A only", pid, f)
		}
	}
	if f := rep.Finding(as); f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "state of uid 65534") {
		t.Errorf("A's orphan: %+v, want refused for A's unreadable state", f)
	}
	if !strings.Contains(r.Stdout, "task_runs is a view, not a table") || !strings.Contains(r.Stdout, "session_nodes is a view, not a table") || !strings.Contains(r.Stdout, "generated columns") {
		t.Errorf("the refusals do not say why:\n%s", r.Stdout[max(0, len(r.Stdout)-3000):])
	}
}

// gatewayTitled copies sleep to a file named openclaw-gateway, so that a
// process running it has the gateway's title in comm, as every process of
// any user may.
func gatewayTitled(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sharedDir(t, 0o755), "openclaw-gateway")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// markedPolicy terminates reparented trees whose command line holds mark,
// of the users named (uids), acting at once.
func markedPolicy(t *testing.T, mark string, when string, users ...string) string {
	t.Helper()
	list := `"0"`
	for _, u := range users {
		list += `, "` + u + `"`
	}
	return clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n[[rule]]\nname = \"marked\"\nwhen = [%s]\ncmdline = '%s'\nuser = [%s]\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), when, regexp.QuoteMeta(mark), list))
}

// Attack 8 (and 4's second half): processes of user A titled
// openclaw-gateway whose OPENCLAW_STATE_DIR names a directory that is not
// A's — relative, through /proc/self, back out of A's home through a
// link, or /tmp itself, where A planted a gateway lock. Root's reaper once
// read /tmp as that gateway's state, and A's lock there held back every
// root tree. Each dir is now refused, and said so.
func TestAttackNamedStateDirsChecked(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	gw := gatewayTitled(t)
	home := userDir(t)
	if err := os.Symlink("/", filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(home, "link"), 65534, 65534)
	lock := fmt.Sprintf("/tmp/gateway.attack-%s.lock", clitest.Mark)
	os.WriteFile(lock, []byte(`{"pid": 1, "createdAt": "2026-01-01T00:00:00Z"}`), 0o644)
	os.Chown(lock, 65534, 65534)
	t.Cleanup(func() { os.Remove(lock) })
	named := []string{"../..", "/proc/self/cwd", "/proc/self/root", home + "/link/../..", "/tmp"}
	for _, v := range named {
		adoptShell(t, fmt.Sprintf("OPENCLAW_STATE_DIR=%q exec %s 600", v, gw), nobody)
	}
	mark := "named-" + clitest.Mark
	orphan := adopt(t, "npm exec mcp-remote https://"+mark, "sleep 600; exit 0", nil)
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", markedPolicy(t, mark, `"reparented"`))
	if f := rep.Finding(orphan); f == nil || f.Outcome != "killed" || r.Code != 0 {
		t.Errorf("root's orphan: %+v, exit %d; want killed, exit 0: no dir A names is root's state\n%s", f, r.Code, r.Stderr)
	}
	var out struct{ Warnings []string }
	json.Unmarshal([]byte(r.Stdout), &out)
	for _, v := range named {
		if !slices.ContainsFunc(out.Warnings, func(w string) bool {
			return strings.Contains(w, "OPENCLAW_STATE_DIR: state dir not read: "+strconv.Quote(v)) || strings.Contains(w, "state dir not read: "+v+" ")
		}) {
			t.Errorf("the state dir %q is not reported as refused; warnings %q", v, out.Warnings)
		}
	}
}

// Attack 9: once user A's gateway-titled process names A's state dir (so
// it is read), a root process carrying OPENCLAW_SHELL and that dir in
// OPENCLAW_STATE_DIR once became owner-dead by A's lock. A's dir speaks
// for A's processes: the control, A's own process with the same
// environment, is owner-dead and reaped.
func TestAttackBorrowedStateDir(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	state := stateOwnedBy(t, 65534)
	lockDir := filepath.Join(state, "tmp", "openclaw-65534")
	os.MkdirAll(lockDir, 0o755)
	os.WriteFile(filepath.Join(lockDir, "gateway.borrow.lock"), []byte(fmt.Sprintf(`{"pid": %d, "createdAt": %q, "startTime": 1}`,
		deadPID(t), time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))), 0o644)
	chownAll(t, state, 65534)
	adoptShell(t, fmt.Sprintf("OPENCLAW_STATE_DIR=%q exec %s 600", state, gatewayTitled(t)), nobody)
	mark := "borrow-" + clitest.Mark
	env := fmt.Sprintf("OPENCLAW_SHELL=exec OPENCLAW_STATE_DIR=%q", state)
	roots := adoptShell(t, fmt.Sprintf("%s exec -a %q bash -c 'sleep 600; exit 0'", env, "root-"+mark), nil)
	theirs := adoptShell(t, fmt.Sprintf("%s exec -a %q bash -c 'sleep 600; exit 0'", env, "a-"+mark), nobody)
	// Both execs done (on a loaded machine the reap came first, and found
	// no process of the mark).
	clitest.WaitFor(t, func() bool {
		return strings.HasPrefix(clitest.CmdlineOf(roots), "root-"+mark) && strings.HasPrefix(clitest.CmdlineOf(theirs), "a-"+mark)
	}, "the two marked processes")
	rep, r := clitest.ReapJSONEnv(t, nil, "--policy", markedPolicy(t, mark, `"owner-dead"`, "65534"))
	if f := rep.Finding(roots); f != nil && (f.Outcome == "killed" || clitest.Contains(f.Reasons, "owner-dead")) || clitest.StateOf(roots) == "" {
		t.Errorf("root's process: %+v, alive %v; want neither owner-dead nor signalled\n%s", f, clitest.StateOf(roots) != "", r.Stderr)
	}
	if f := rep.Finding(theirs); f == nil || f.Outcome != "killed" || !clitest.Contains(f.Reasons, "owner-dead") {
		t.Errorf("control, A's own process: %+v, want owner-dead and killed", f)
	}
}

// Attack 11: user B's reaper without XDG_RUNTIME_DIR once locked
// /tmp/reaper-<uid>.lock, which user A can create first (and hold): B's
// reaper stopped every run. It now locks in B's cache dir; a lock file of
// A's named on the command line is refused with its owner named.
func TestAttackLockFileOfAnother(t *testing.T) {
	clitest.RequireRoot(t)
	planted := fmt.Sprintf("/tmp/reaper-%d.lock", userB.Uid)
	if _, err := os.Lstat(planted); err == nil {
		skips.Skipf(t, "%s exists on this machine: not the test's to replace", planted)
	}
	holder := exec.Command("flock", "-x", planted, "sleep", "600")
	holder.SysProcAttr = &syscall.SysProcAttr{Credential: nobody, Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait(); os.Remove(planted) })
	clitest.WaitFor(t, func() bool { _, err := os.Stat(planted); return err == nil }, "A's lock file")
	home := sharedDir(t, 0o755)
	os.Chown(home, int(userB.Uid), int(userB.Gid))
	env := []string{"HOME=" + home, "XDG_RUNTIME_DIR=", "XDG_CACHE_HOME=", "OPENCLAW_STATE_DIR="}
	if r := runReaperAs(t, userB, env, "reap", "--dry-run", "--lock-timeout", "1s", "--journal", "off"); r.Code != 0 {
		t.Errorf("B's reaper with A holding /tmp/reaper-%d.lock: exit %d, want 0\n%s", userB.Uid, r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "reaper", "reaper.lock")); err != nil {
		t.Errorf("B's lock is not in B's cache dir: %v", err)
	}
	r := runReaperAs(t, userB, env, "reap", "--dry-run", "--lock-file", planted, "--lock-timeout", "1s", "--journal", "off")
	if r.Code == 0 || !strings.Contains(r.Stderr, "owned by uid 65534") {
		t.Errorf("B's reaper given A's lock file: exit %d, %q; want refused naming its owner", r.Code, r.Stderr)
	}
}

// envRenamer makes a helper the renamer of attack 7.
const envRenamer = "REAPER_TEST_RENAMER"

// runRenamer waits (inotify) for anyone to open HOME/.openclaw or a file
// in it, then renames the dir away, as user A could; it writes
// HOME/renamed when it did, and sleeps.
func runRenamer(home string) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		os.Exit(2)
	}
	dir := filepath.Join(home, ".openclaw")
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		os.Exit(2)
	}
	os.WriteFile(filepath.Join(home, "watching"), nil, 0o644)
	buf := make([]byte, 4096)
	if _, err := unix.Read(fd, buf); err != nil {
		os.Exit(2)
	}
	if err := os.Rename(dir, filepath.Join(home, ".openclaw-moved")); err == nil {
		os.WriteFile(filepath.Join(home, "renamed"), nil, 0o644)
	}
	time.Sleep(time.Minute)
	os.Exit(0)
}

// Attack 7: user A renames a state dir away the moment reaper opens it.
// Its doubt once became "all", and every user's orphans were refused, every
// run. The dir's uid is taken when it is listed: what goes wrong with it
// is A's doubt only, and root's orphan is reaped in the same run. Whether
// the rename lands while the reader is at work or just after it finished
// is the scheduler's to decide (after, A's dir was read whole and A's
// orphan is rightly reaped), so the run is tried up to five times: root's
// orphan must be reaped every time, and one try must catch the rename
// mid-read, refusing A's orphan for A's state and nobody else's.
func TestAttackRenamedStateDir(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	// This test binary, copied where nobody may run it: the renamer.
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(sharedDir(t, 0o755), "renamer")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for try := 1; try <= 5; try++ {
		if renamedMidRead(t, exe, try) {
			return
		}
	}
	t.Error("in 5 tries the rename never landed while the reader was at work: A's orphan was never held back for it")
}

// renamedMidRead is one try of attack 7: it reports whether the reader was
// caught mid-read, and fails the test if root's orphan is not reaped or A's
// dir holds back anyone else.
func renamedMidRead(t *testing.T, renamerExe string, try int) bool {
	t.Helper()
	home := sharedDir(t, 0o755)
	os.MkdirAll(filepath.Join(home, ".openclaw", "state"), 0o755)
	writeRegistryStore(t, filepath.Join(home, ".openclaw"), 65534)
	// Thirty agent stores, about a millisecond each to read: the reader
	// is still at work when the renamer, woken by its first open of the
	// dir, moves it (once it has, every read by path fails at once).
	for i := 0; i < 30; i++ {
		hostileStore(t, filepath.Join(home, ".openclaw", "agents", fmt.Sprintf("a%02d", i), "agent", "openclaw-agent.sqlite"), 65534,
			`CREATE TABLE session_nodes (session_key TEXT, archived_at INTEGER)`)
	}
	chownAll(t, home, 65534)
	renamer := exec.Command(renamerExe)
	renamer.Env = append(os.Environ(), envRenamer+"="+home)
	renamer.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	if err := renamer.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { renamer.Process.Kill(); renamer.Wait() })
	clitest.WaitFor(t, func() bool { _, err := os.Stat(filepath.Join(home, "watching")); return err == nil }, "the renamer's watch")
	mark := fmt.Sprintf("renamed%d-%s", try, clitest.Mark)
	roots := adopt(t, "npm exec mcp-remote https://root-"+mark, "sleep 600; exit 0", nil)
	as := adopt(t, "npm exec mcp-remote https://a-"+mark, "sleep 600; exit 0", nobody)
	r := runReaperWithAccounts(t, []string{"attacker:x:65534:65534::" + home + ":/bin/sh"}, nil,
		"reap", "--output", "json", "--journal", "off", "--policy", markedPolicy(t, mark, `"reparented"`, "65534"), "--lock-file", filepath.Join(t.TempDir(), "lock"))
	var rep clitest.ReapReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("reap: exit %d, %v\n%s", r.Code, err, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "renamed")); err != nil {
		t.Fatal("control: the renamer did not rename the state dir while it was read")
	}
	if f := rep.Finding(roots); f == nil || f.Outcome != "killed" {
		t.Errorf("try %d: root's orphan: %+v, want killed: A's renamed dir is A's doubt only\n%s", try, f, r.Stdout)
	}
	// Caught mid-read, what the dir held is not known: A's own tree waits
	// for a run that reads it whole.
	f := rep.Finding(as)
	caught := f != nil && f.Outcome == "refused" && strings.Contains(f.Detail, "state of uid 65534") && strings.Contains(f.Detail, "removed while it was read")
	if !caught {
		t.Logf("try %d: the reader finished before the rename landed; A's orphan: %+v", try, f)
	}
	return caught
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/clitest"
)

// The attacks of docs/threat-model.md numbered 12 to 18: what any user
// controls costs a root run at most a fixed budget, and that budget is
// that user's doubt, never everyone's veto. User A is nobody (65534), B is
// 65533. In every run root's and B's marked orphans must be killed, and
// the run must not end at its deadline (--timeout 20s: each attack once
// took a run past it, exit 1, signalling nothing for anyone). Each attack
// has its control: the same run without the attack, or the same evidence
// spoken by the right user.

// attackRun is one root run against hostile users: its mark, the
// accounts and /etc files it sees, and the orphans it must kill.
type attackRun struct {
	mark    string
	home    map[uint32]string // uid → home, for the accounts
	order   []uint32          // the accounts' order in passwd
	subuid  string            // /etc/subuid's content, if any
	victims []int             // orphans of root and B: killed, always
	want    map[int]string    // other findings' expected outcome ("" = no finding)
	when    string            // the rule's reasons
	users   []string          // the rule's users besides root
	policy  string            // the policy's [[owner]] entries, if any
}

// gatewayOwner is the example policy's OpenClaw gateway, recognised by its
// title and marking its children with its pid.
const gatewayOwner = `[[owner]]
name = "openclaw-gateway"
cmdline = '(^|/)openclaw-gateway( |$)'
pid_env = "OPENCLAW_GATEWAY_SERVICE_PID"
`

// newAttackRun makes a run with root's and B's marked orphans.
func newAttackRun(t *testing.T, name string) *attackRun {
	t.Helper()
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	a := &attackRun{mark: name + "-" + clitest.Mark, home: map[uint32]string{}, want: map[int]string{},
		when: `"reparented"`, users: []string{"65533", "65534"}}
	a.victims = []int{a.orphan(t, "root", nil, ""), a.orphan(t, "b", userB, "")}
	return a
}

// orphan adopts a marked orphan of cred (nil: root) whose environment
// gets env (a shell assignment list) and returns its pid.
func (a *attackRun) orphan(t *testing.T, who string, cred *syscall.Credential, env string) int {
	t.Helper()
	return adoptShell(t, fmt.Sprintf("%s exec -a %q /bin/bash -c '/bin/sleep 600; :'", env, "npm exec mcp-remote https://"+who+"-"+a.mark), cred)
}

// homeOf gives uid a home the root reaper discovers (an account in its
// passwd), owned by uid, and a process of uid's running (a run reads the
// state only of users who own one: an attacker runs something), and
// returns the home.
func (a *attackRun) homeOf(t *testing.T, uid uint32) string {
	t.Helper()
	if h, ok := a.home[uid]; ok {
		return h
	}
	runAs(t, uid)
	h := sharedDir(t, 0o755)
	os.Chown(h, int(uid), int(uid))
	a.home[uid] = h
	a.order = append(a.order, uid)
	return h
}

// runAs starts a process of uid's (a sleep, the test's own child: no
// orphan) for the test's time.
func runAs(t *testing.T, uid uint32) {
	t.Helper()
	c := exec.Command("sleep", "600")
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}, Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
}

// run runs `reaper reap` as root with JSON output (or args' own), in a
// mount namespace whose /etc is a copy of this one with the run's
// accounts and subuid, and returns the report, the result and how long
// it took.
func (a *attackRun) run(t *testing.T, args ...string) (*clitest.ReapReport, clitest.Result, time.Duration) {
	t.Helper()
	etc := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", "/etc/.", etc+"/").CombinedOutput(); err != nil {
		t.Fatalf("copy /etc: %v %s", err, out)
	}
	var lines strings.Builder
	for _, uid := range a.order {
		name := map[uint32]string{65534: "attacker", 65533: "userb"}[uid]
		if name == "" {
			name = fmt.Sprint("u", uid)
		}
		fmt.Fprintf(&lines, "%s:x:%d:%d::%s:/bin/sh\n", name, uid, uid, a.home[uid])
	}
	f, err := os.OpenFile(filepath.Join(etc, "passwd"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(lines.String())
	f.Close()
	os.WriteFile(filepath.Join(etc, "subuid"), []byte(a.subuid), 0o644)
	list := `"0"`
	for _, u := range a.users {
		list += `, "` + u + `"`
	}
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n%s\n%s\n[[rule]]\nname = \"marked\"\nwhen = [%s]\ncmdline = '%s'\nuser = [%s]\naction = \"terminate\"\n",
		clitest.SelfSubreaper(t), a.policy, a.when, regexp.QuoteMeta(a.mark), list))
	if len(args) == 0 {
		args = []string{"--output", "json"}
	}
	// 20 s on an idle machine, more under load (underLoad): the attacks
	// are against the run's bounds, not the host's speed (issue 64).
	timeout := clitest.UnderLoad(20 * time.Second).Round(time.Second)
	args = append([]string{"reap", "--journal", "off", "--timeout", timeout.String(), "--policy", pol, "--lock-file", filepath.Join(t.TempDir(), "lock")}, args...)
	start := time.Now()
	r := runReaperBound(t, etc, "/etc", nil, args...)
	took := time.Since(start)
	var rep clitest.ReapReport
	if args[len(args)-1] == "json" {
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("reap: exit %d after %s, %v\n%s", r.Code, took, err, r.Stderr)
		}
	}
	t.Logf("the run took %s, exit %d, %d KiB of output", took.Round(time.Millisecond), r.Code, len(r.Stdout)>>10)
	return &rep, r, took
}

// check fails unless root's and B's orphans were killed, the run did not
// end at its deadline, and every other finding is as wanted.
func (a *attackRun) check(t *testing.T, rep *clitest.ReapReport, r clitest.Result) {
	t.Helper()
	if r.Code != audit.ExitOK && r.Code != audit.ExitPartial {
		t.Errorf("exit %d, want 0 or 3: the run must end by itself, not at its deadline\n%s", r.Code, r.Stderr)
	}
	for _, pid := range a.victims {
		if f := rep.Finding(pid); f == nil || f.Outcome != "killed" {
			t.Errorf("orphan %d of root or B: %+v, want killed: what A controls must not spare it", pid, f)
		}
	}
	for pid, want := range a.want {
		f := rep.Finding(pid)
		switch {
		case want == "" && f != nil && f.Outcome != "reported":
			t.Errorf("pid %d: %+v, want no action", pid, f)
		case want != "" && (f == nil || f.Outcome != want):
			t.Errorf("pid %d: %+v, want %s", pid, f, want)
		}
	}
}

// bigArgs is a bash command that sets args to n arguments of 120 KB (a
// single argument is at most 128 KiB, MAX_ARG_STRLEN) after raising the
// stack limit, which bounds argv and the environment to a quarter of it
// (execve(2)); an ordinary user may raise it to its hard limit.
func bigArgs(n int) string {
	return fmt.Sprintf(`ulimit -s unlimited 2>/dev/null || ulimit -s "$(ulimit -H -s)"; big=$(head -c 122880 /dev/zero | tr '\0' a); args=(); for i in $(seq %d); do args+=("$big"); done; `, n)
}

// Attack 12: A starts 12 orphans whose command lines are megabytes. Root's
// reaper read each whole and ran the classification over it: 5-10 s each,
// every run ended at --timeout, nothing signalled for anyone. Now a command
// line is read up to 64 KiB: A's orphans are refused as read in part (A's
// own doubt), root's and B's are killed. The control: the same orphans
// with plain command lines are killed too.
func TestAttackHugeCommandLines(t *testing.T) {
	for _, huge := range []bool{true, false} {
		t.Run(map[bool]string{true: "attack", false: "control"}[huge], func(t *testing.T) {
			a := newAttackRun(t, "argv")
			as := hugeCommandLines(t, a, huge)
			rep, r, _ := a.run(t)
			a.check(t, rep, r)
			for _, pid := range as {
				f := rep.Finding(pid)
				switch {
				case huge && (f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "longer than 64 KiB and was read in part")):
					t.Errorf("A's orphan %d: %+v, want refused, read in part", pid, f)
				case !huge && (f == nil || f.Outcome != "killed"):
					t.Errorf("control: A's orphan %d: %+v, want killed", pid, f)
				}
			}
		})
	}
}

// hugeCommandLines starts A's 12 marked orphans, with command lines of
// 4.8 MB each when huge, and returns their pids once each has exec'd.
func hugeCommandLines(t *testing.T, a *attackRun, huge bool) []int {
	t.Helper()
	n := 0
	if huge {
		n = 40
	}
	var as []int
	for range 12 {
		as = append(as, adoptShell(t, fmt.Sprintf(`%s exec -a %q /bin/bash -c '/bin/sleep 600; :' "${args[@]}"`, bigArgs(n), "npm exec mcp-remote https://a-"+a.mark), nobody))
	}
	for _, pid := range as { // each has built its arguments and exec'd
		clitest.WaitFor(t, func() bool { return strings.HasPrefix(clitest.CmdlineOf(pid), "npm exec") }, "the orphan's exec")
	}
	t.Logf("A's 12 orphans' command lines: %d KiB each", len(clitest.CmdlineOf(as[0]))>>10)
	return as
}

// Attack 13: nine Codex daemon records on the host (A's own, in A's home
// and in 8 CODEX_HOMEs A's orphans name) and 90 orphans of A whose PATH is
// one deep entry of /a/a/…: the PATH tie hashed every leading directory
// of it, quadratic, and every run ended at its deadline. Now an
// environment is read up to 64 KiB (a 120 KB PATH is not read: those
// orphans are read in part, A's doubt) and an entry within it is walked
// once through the marks' directories (a 50 KB PATH: those orphans are
// killed). The control: the same orphans with a PATH of two directories.
// deepPATHs gives A nine Codex daemon records (in A's home and in 8
// CODEX_HOMEs) and n marked orphans naming them, half with a 50 KB PATH
// of /a/a/… and half with a 120 KB one when deep (else two directories),
// and returns the two halves.
func deepPATHs(t *testing.T, a *attackRun, deep bool, n int) (within, past []int) {
	t.Helper()
	record := func(home string) {
		dir := filepath.Join(home, "app-server-daemon")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "daemon.pid"), []byte(fmt.Sprintf(`{"pid": %d}`, deadPID(t))), 0o644)
		chownAll(t, home, 65534)
	}
	record(filepath.Join(a.homeOf(t, 65534), ".codex"))
	var homes []string
	for i := range 8 {
		h := filepath.Join(userDir(t), fmt.Sprintf("codex%d", i))
		record(h)
		homes = append(homes, h)
	}
	paths := []string{"/usr/bin:/bin", "/usr/bin:/bin"}
	if deep {
		// Within the 64 KiB read of an environment, and past it (an
		// environment string is at most 128 KiB, MAX_ARG_STRLEN).
		paths = []string{strings.Repeat("/a", 25<<10), strings.Repeat("/a", 60<<10)}
	}
	for i := range n {
		pid := a.orphan(t, "a", nobody, fmt.Sprintf("export CODEX_HOME=%s PATH=%s;", homes[i%8], paths[i%2]))
		if i%2 == 0 {
			within = append(within, pid)
		} else {
			past = append(past, pid)
		}
	}
	return within, past
}

func TestAttackQuadraticPATH(t *testing.T) {
	for _, deep := range []bool{true, false} {
		t.Run(map[bool]string{true: "attack", false: "control"}[deep], func(t *testing.T) {
			a := newAttackRun(t, "path")
			within, past := deepPATHs(t, a, deep, 90) // with root's and B's, within the default max_actions (100)
			rep, r, _ := a.run(t)
			a.check(t, rep, r)
			for _, pid := range within {
				if f := rep.Finding(pid); f == nil || f.Outcome != "killed" {
					t.Errorf("A's orphan %d: %+v, want killed", pid, f)
					break
				}
			}
			for _, pid := range past {
				f := rep.Finding(pid)
				switch {
				case deep && f != nil && (f.Outcome != "refused" || !strings.Contains(f.Detail, "environment is longer than 64 KiB")):
					t.Errorf("A's orphan %d with a 120 KB PATH: %+v, want refused (read in part) or not matched", pid, f)
				case !deep && (f == nil || f.Outcome != "killed"):
					t.Errorf("control: A's orphan %d: %+v, want killed", pid, f)
				}
			}
		})
	}
}

// claudeTitled copies sleep to a file named claude, so that a process
// running it has claude's comm, as any user's process may.
func claudeTitled(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sharedDir(t, 0o755), "claude")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// manyUIDs starts one claude-titled process for each of n uids from first,
// each naming a config dir that uid owns, as a user with a subordinate id
// range can (newuidmap). They are children of one root shell, killed by
// its process group when the test ends.
func manyUIDs(t *testing.T, first, n int) {
	t.Helper()
	claude := claudeTitled(t)
	root := sharedDir(t, 0o755)
	var script strings.Builder
	for i := range n {
		uid := first + i
		dir := filepath.Join(root, fmt.Sprint(uid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chown(dir, uid, uid)
		fmt.Fprintf(&script, "setpriv --reuid=%d --regid=%d --clear-groups env CLAUDE_CONFIG_DIR=%s %s 600 &\n", uid, uid, dir, claude)
	}
	script.WriteString("wait\n")
	file := filepath.Join(root, "start.sh")
	os.WriteFile(file, []byte(script.String()), 0o644)
	cmd := exec.Command("bash", file)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		// Its children are this (subreaper) process's now: reaped here,
		// or they would stay zombies for every later test's report.
		for _, pid := range pids {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
		}
	})
	clitest.WaitForN(t, n, func() bool { pids = clitest.ChildrenOf(cmd.Process.Pid); return len(pids) >= n }, fmt.Sprintf("%d claude processes", n))
	// Each has exec'd claude (not setpriv, not env) once its comm says so.
	clitest.WaitForN(t, n, func() bool {
		for _, c := range clitest.ChildrenOf(cmd.Process.Pid) {
			if clitest.StatOf(c).Comm != "claude" {
				return false
			}
		}
		return true
	}, "every process to run claude")
}

// Attack 14: A, with the subordinate id range useradd gives by default,
// runs one claude-titled process per mapped id (1,200), each naming a
// config dir that id owns: root started a reader child for each, four at a
// time, and every run ended at its deadline. Now a user's subordinate ids
// are that user's: readers for 4 of them, the rest that uid's doubt. The
// control, without the range in /etc/subuid: each id is its own user, and
// the run's time for reading (10 s at most) bounds them instead; root's
// and B's orphans are killed either way.
func TestAttackManyUIDs(t *testing.T) {
	clitest.RequireRoot(t)
	const first, n = 200000, 1200
	manyUIDs(t, first, n)
	for _, mapped := range []bool{true, false} {
		t.Run(map[bool]string{true: "attack", false: "control"}[mapped], func(t *testing.T) {
			a := newAttackRun(t, "uids")
			a.homeOf(t, 65534)
			if mapped {
				a.subuid = fmt.Sprintf("attacker:%d:65536\n", first)
			}
			rep, r, _ := a.run(t)
			a.check(t, rep, r)
			// The dirs left unread are said once per user, with a count.
			unread := regexp.MustCompile(`whose share of readers \(4 uids a run\) is taken \(and (\d+) more state dirs of uid 65534's left unread`)
			share := 0
			for _, e := range rep.Errors {
				if m := unread.FindStringSubmatch(e); m != nil {
					fmt.Sscan(m[1], &share)
					share++
				}
			}
			t.Logf("%d uids left unread for A's share; %d lines of errors in all", share, len(rep.Errors))
			if mapped && share != n-4 {
				t.Errorf("%d uids held back by A's share, want %d (said in one line)", share, n-4)
			}
			if len(rep.Errors) > 10 {
				t.Errorf("%d lines of errors: what a user's ids cost the report must not grow with them; the first: %q", len(rep.Errors), rep.Errors[:3])
			}
		})
	}
}

// Attack 15: root's and B's orphans carry OPENCLAW_GATEWAY_SERVICE_PID=P,
// naming their dead gateway; A holds pid P (pid reuse) with a process
// titled openclaw-gateway. The orphans were counted as a live gateway's:
// never reaped. A live owner by pid must now be of the marked process's
// user (or root) and older than it: the orphans are owner-dead. The
// control: B's own gateway, started before B's orphan, owns it (no
// finding the owner-dead rule acts on), while root's orphan is still
// owner-dead (B's gateway is no owner of root's).
// pidReuse starts a process of cred running gw (titled
// openclaw-gateway) at some pid P, then root's and B's marked orphans
// carrying OPENCLAW_GATEWAY_SERVICE_PID=P, and returns the three pids.
func pidReuse(t *testing.T, a *attackRun, gw string, cred *syscall.Credential) (p, root, b int) {
	t.Helper()
	p = adoptShell(t, fmt.Sprintf("exec %s 600", gw), cred)
	env := fmt.Sprintf("export OPENCLAW_GATEWAY_SERVICE_PID=%d;", p)
	return p, a.orphan(t, "root", nil, env), a.orphan(t, "b", userB, env)
}

func TestAttackPIDReuseShield(t *testing.T) {
	gw := gatewayTitled(t)
	for _, tt := range []struct {
		name string
		cred *syscall.Credential
	}{{"attack", nobody}, {"control", userB}} {
		t.Run(tt.name, func(t *testing.T) {
			clitest.RequireRoot(t)
			clitest.BecomeSubreaper(t)
			a := &attackRun{mark: "reuse-" + clitest.Mark, home: map[uint32]string{}, want: map[int]string{}, when: `"owner-dead"`, users: []string{"65533"}, policy: gatewayOwner}
			p, root, b := pidReuse(t, a, gw, tt.cred)
			a.victims = []int{root}
			if tt.name == "attack" {
				a.victims = append(a.victims, b)
			} else {
				a.want[b] = ""
			}
			rep, r, _ := a.run(t)
			a.check(t, rep, r)
			if f := rep.Finding(root); f != nil && !strings.Contains(strings.Join(f.Evidence, "\n"), "not of uid 0 whose process the marker is on") {
				t.Errorf("root's orphan: the evidence does not say why pid %d is not its owner: %q", p, f.Evidence)
			}
		})
	}
}

// sessionFile writes a Claude Code session file in home, owned by uid.
func sessionFile(t *testing.T, home string, uid uint32, pid int, session string) {
	t.Helper()
	dir := filepath.Join(home, ".claude", "sessions")
	os.MkdirAll(dir, 0o700)
	b, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": session, "cwd": "/w", "startedAt": time.Now().Add(-time.Hour).UnixMilli(), "procStart": "1", "kind": "interactive"})
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", pid)), b, 0o600)
	chownAll(t, filepath.Join(home, ".claude"), uid)
}

// Attack 16: B's dead claude's Bash-tool shell carries B's session id; A
// writes a session file of their own with the same id. Whichever home was
// read first decided: with A's first, B's shell was tied to nothing and
// never reaped. Now A's claim is skipped and B's own file ties it,
// owner-dead, in both orders. The control: with A's file alone, B's shell
// is untracked, and the owner-dead rule leaves it.
// foreignClaim gives A and B homes (in order), A a session file claiming
// a session id, and B — when bsFile — B's own session file with that id
// naming a dead claude; it returns B's marked orphan carrying the id (a
// dead claude's Bash-tool shell).
func foreignClaim(t *testing.T, a *attackRun, order []uint32, bsFile bool) int {
	t.Helper()
	session := "s-" + clitest.Mark
	for _, uid := range order {
		a.homeOf(t, uid)
	}
	sessionFile(t, a.home[65534], 65534, os.Getpid(), session) // A's claim names a live pid
	if bsFile {
		sessionFile(t, a.home[65533], 65533, deadPID(t), session)
	}
	return a.orphan(t, "b", userB, fmt.Sprintf("export CLAUDE_CODE_SESSION_ID=%s;", session))
}

func TestAttackForeignSessionClaim(t *testing.T) {
	for _, tt := range []struct {
		name   string
		order  []uint32
		bsFile bool
	}{{"A's home first", []uint32{65534, 65533}, true}, {"B's home first", []uint32{65533, 65534}, true}, {"control: A's claim alone", []uint32{65534, 65533}, false}} {
		t.Run(tt.name, func(t *testing.T) {
			clitest.RequireRoot(t)
			clitest.BecomeSubreaper(t)
			a := &attackRun{mark: "claim-" + clitest.Mark, home: map[uint32]string{}, want: map[int]string{}, when: `"owner-dead"`, users: []string{"65533"}}
			b := foreignClaim(t, a, tt.order, tt.bsFile)
			if tt.bsFile {
				a.victims = []int{b}
			} else {
				a.want[b] = ""
			}
			rep, r, _ := a.run(t)
			a.check(t, rep, r)
		})
	}
}

// Attack 17: `reap --quiet`, what the units run (one journal entry per
// line), printed command lines, details and errors raw. A's orphan whose
// argv holds a newline and a forged line, with ESC, and a state dir A's
// gateway-titled process names whose name holds one too: they made
// standalone lines "reaper reap: tree 1 killed …" in root's output. Now
// every such byte is escaped. The control: the forged text is there,
// escaped, so the test would see it raw.
// forgedNames starts A's marked orphan whose argv holds a newline, a
// forged line and ESC, and A's gateway-titled process naming a state dir
// whose name holds the forged line too, with garbage in its lock; it
// returns the forged line.
func forgedNames(t *testing.T, a *attackRun) string {
	t.Helper()
	forged := "reaper reap: tree 1 killed (exec, rule marked, 1 process, 0 B): /sbin/init splash"
	adoptShell(t, fmt.Sprintf("exec -a $'npm exec mcp-remote https://a-%s\\n%s\\x1b[2J' /bin/bash -c '/bin/sleep 600; :'", a.mark, forged), nobody)
	state := filepath.Join(userDir(t), "x\n"+forged)
	os.Mkdir(state, 0o755)
	os.WriteFile(filepath.Join(state, "gateway.0123abcd.lock"), []byte("garbage \x1b[2J"), 0o644)
	chownAll(t, state, 65534)
	adoptShell(t, fmt.Sprintf("export OPENCLAW_STATE_DIR=$'%s'; exec %s 600", strings.ReplaceAll(state, "\n", `\n`), gatewayTitled(t)), nobody)
	// Bytes that are not UTF-8 and no control besides: a lone 0x9B is
	// the 8-bit CSI to a terminal that takes C1 raw (issue 51, 5a).
	adoptShell(t, fmt.Sprintf("exec -a $'npm exec mcp-remote https://b-%s/\x9b2J\xff' /bin/bash -c '/bin/sleep 600; :'", a.mark), nobody)
	return forged
}

func TestAttackForgedLines(t *testing.T) {
	a := newAttackRun(t, "forge")
	forged := forgedNames(t, a)
	_, r, _ := a.run(t, "--quiet")
	out := r.Stdout + r.Stderr
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, forged) {
			t.Errorf("a forged line: %q", line)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("ESC reaches root's output raw:\n%q", out)
	}
	if !strings.Contains(out, `\n`+forged) {
		t.Errorf("the control: the forged text is not in the output at all, escaped:\n%s", out)
	}
	if !utf8.ValidString(out) || strings.Contains(out, "\x9b") {
		t.Errorf("a byte that is not UTF-8 reaches root's output raw:\n%q", out)
	}
	if !strings.Contains(out, `/\x9b2J\xff`) {
		t.Errorf("the control: the tree named with 0x9B is not in the output, escaped:\n%s", out)
	}
}

// Attack 18: 120 of A's session files with 118 KiB session ids (14 MB):
// root's run went from 0.25 s to 6.4 s, its peak from 10 MB to 155 MB,
// and every report to 14 MB. Now an id longer than 256 bytes is no
// session file: refused in A's reader, A's doubt, and the report stays
// small. The control: 120 files with real ids are read.
// bloatedSessions writes 120 session files in A's home, with 118 KiB
// session ids when bloat (else real ones), each naming a dead pid.
func bloatedSessions(t *testing.T, a *attackRun, bloat bool) {
	t.Helper()
	home := a.homeOf(t, 65534)
	id := func(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) }
	if bloat {
		id = func(i int) string { return fmt.Sprintf("%d-%s", i, strings.Repeat("x", 118<<10)) }
	}
	dead := deadPID(t)
	for i := range 120 {
		sessionFile(t, home, 65534, dead-i, id(i))
	}
}

func TestAttackSessionIDBloat(t *testing.T) {
	for _, bloat := range []bool{true, false} {
		t.Run(map[bool]string{true: "attack", false: "control"}[bloat], func(t *testing.T) {
			a := newAttackRun(t, "bloat")
			bloatedSessions(t, a, bloat)
			rep, r, _ := a.run(t)
			a.check(t, rep, r)
			if n := len(r.Stdout); n > 256<<10 {
				t.Errorf("the report is %d KiB, want it small: A's ids must not reach it", n>>10)
			}
			bad := 0
			for _, e := range rep.Errors {
				if strings.Contains(e, "sessionId is 120") {
					bad++
				}
			}
			if bloat && bad != 120 || !bloat && bad != 0 {
				t.Errorf("%d session files refused for their id, want %d", bad, map[bool]int{true: 120, false: 0}[bloat])
			}
		})
	}
}

// The budget: A mounts every attack above at once — 1,200 subordinate
// ids each naming a config dir, 12 orphans with 4.8 MB command lines, 40
// with deep PATHs against nine daemon records, 120 bloated session files
// and a session file claiming B's session, a process at the pid root's
// and B's orphans name as their gateway's, forged names — and root's and
// B's orphans, proven owner-dead by their own evidence, are still killed
// in the same run, which ends by itself well inside its deadline. The
// control is each attack's own test above.
func TestAttackEverythingAtOnce(t *testing.T) {
	clitest.RequireRoot(t)
	const first, n = 300000, 1200
	manyUIDs(t, first, n)
	clitest.BecomeSubreaper(t)
	a := &attackRun{mark: "all-" + clitest.Mark, home: map[uint32]string{}, want: map[int]string{}, when: `"owner-dead"`,
		users: []string{"65533", "65534"}, policy: gatewayOwner, subuid: fmt.Sprintf("attacker:%d:65536\n", first)}
	bShell := foreignClaim(t, a, []uint32{65534, 65533}, true)
	_, root, b := pidReuse(t, a, gatewayTitled(t), nobody)
	a.victims = []int{root, b, bShell}
	hugeCommandLines(t, a, true)
	deepPATHs(t, a, true, 40)
	bloatedSessions(t, a, true)
	forgedNames(t, a)
	rep, r, took := a.run(t)
	a.check(t, rep, r)
	t.Logf("everything at once: %s, exit %d, %d findings, %d lines of errors, a %d KiB report", took.Round(time.Millisecond), r.Code,
		len(rep.Findings), len(rep.Errors), len(r.Stdout)>>10)
	if len(rep.Errors) > 200 || len(r.Stdout) > 1<<20 {
		t.Errorf("%d lines of errors, a %d KiB report: what A controls must not grow root's report without bound", len(rep.Errors), len(r.Stdout)>>10)
	}
}

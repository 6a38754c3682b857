package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// TestPSCopies: three stand-in Claude Code sessions of one user, each
// running the same two stdio servers. ps's JSON has two duplicates, each
// 3 copies under the 3 sessions with a memory figure; the table says so
// in words; reap --dry-run plans nothing for them. The control: a fourth
// server only one session runs is no duplicate.
func TestPSCopies(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("copies%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"")
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}
	servers := []string{"npm exec mcp-remote https://a." + mark, "npm exec mcp-remote https://b." + mark}
	var sessions, copies []int
	for i := range 3 {
		script := fmt.Sprintf("export CLAUDE_CODE_SESSION_ID=s%d-%s;", i, clitest.Mark)
		for _, srv := range servers {
			script += fmt.Sprintf(" (exec -a %q sleep 600) &", srv)
		}
		if i == 0 {
			script += fmt.Sprintf(" (exec -a %q sleep 600) &", "npm exec mcp-remote https://only."+mark)
		}
		owner := adopt(t, "session-owner-"+mark, script+" wait", nil)
		for _, srv := range servers {
			pid := childStarting(t, owner, srv, "server "+srv)
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			copies = append(copies, pid)
		}
		if i == 0 {
			pid := childWith(t, owner, "https://only."+mark, "the server one session runs")
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		}
		writeSession(t, home, owner, fmt.Sprintf("s%d-%s", i, clitest.Mark))
		sessions = append(sessions, owner)
	}
	r := clitest.RunReaper(t, env, "ps", "-o", "json", "--policy", pol)
	if r.Code != 0 {
		t.Fatalf("ps: exit %d\n%s", r.Code, r.Stderr)
	}
	clitest.ValidPS(t, r.Stdout)
	var doc struct {
		Duplicates []struct {
			Command     string
			Copies      int
			Sessions    []int
			PIDs        []int
			MemoryBytes uint64 `json:"memory_bytes"`
			Advice      string
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var ours []string
	slices.Sort(sessions)
	for _, d := range doc.Duplicates {
		if !strings.Contains(d.Command, mark) {
			continue // another test's, or the machine's own
		}
		ours = append(ours, strings.TrimSuffix(d.Command, " 600")) // sleep's argument
		if d.Copies != 3 || !slices.Equal(d.Sessions, sessions) || len(d.PIDs) != 3 || d.MemoryBytes == 0 ||
			!strings.Contains(d.Advice, "claude mcp add --transport http") {
			t.Errorf("duplicate %+v: want 3 copies under sessions %v, their memory, Claude Code's advice", d, sessions)
		}
		for _, pid := range d.PIDs {
			if !slices.Contains(copies, pid) {
				t.Errorf("duplicate %q names pid %d, not one of the copies %v", d.Command, pid, copies)
			}
		}
	}
	slices.Sort(ours)
	if !slices.Equal(ours, servers) {
		t.Errorf("duplicates of this test: %q, want the two servers %q (not the one only one session runs):\n%s", ours, servers, r.Stdout)
	}
	table := clitest.RunReaper(t, env, "ps", "--policy", pol)
	if !strings.Contains(table.Stdout, "copies across live sessions") || !strings.Contains(table.Stdout, "3 copies under 3 sessions") {
		t.Errorf("ps's table does not say the copies in words:\n%s", table.Stdout)
	}
	plan := clitest.RunReaper(t, env, "reap", "--dry-run", "-o", "json", "--policy", pol)
	for _, pid := range copies {
		if strings.Contains(plan.Stdout, fmt.Sprintf(`"root_pid": %d,`, pid)) {
			t.Errorf("reap --dry-run plans for a live session's server %d:\n%s", pid, plan.Stdout)
		}
	}
}

// TestHeadroom: a user with 5 processes whose RLIMIT_NPROC is 6 is warned
// in ps (its JSON and its words) and in doctor; the control, a user with
// as many processes and a limit of 100, is shown and not warned.
func TestHeadroom(t *testing.T) {
	clitest.RequireRoot(t)
	// Two uids no account has, so no other process counts against them.
	near, far := 40000+os.Getpid()%10000, 50000+os.Getpid()%10000
	for _, u := range []struct{ uid, limit int }{{near, 6}, {far, 100}} {
		for range 5 {
			// The shell lowers its own limit, as a login's ulimit does, and
			// becomes the sleep: no fork after it.
			c := exec.Command("bash", "-c", fmt.Sprintf("ulimit -u %d && exec sleep 600", u.limit))
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			pid := c.Process.Pid
			t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL); c.Wait() })
			clitest.WaitFor(t, func() bool { return strings.HasPrefix(clitest.CmdlineOf(pid), "sleep") }, "the limited sleep")
		}
	}
	env := []string{"HOME=/", "XDG_CONFIG_HOME=/nonexistent", "CLAUDE_CONFIG_DIR="}
	r := clitest.RunReaper(t, env, "ps", "-o", "json")
	clitest.ValidPS(t, r.Stdout)
	var doc struct {
		Headroom []struct {
			UID            int
			Tasks, Percent int
			ProcessLimit   uint64 `json:"process_limit"`
			Warn           bool
		}
		Warnings []string
	}
	json.Unmarshal([]byte(r.Stdout), &doc)
	got := map[int]string{}
	for _, h := range doc.Headroom {
		got[h.UID] = fmt.Sprintf("%d tasks of %d, %d%%, warn %t", h.Tasks, h.ProcessLimit, h.Percent, h.Warn)
	}
	if got[near] != "5 tasks of 6, 83%, warn true" || got[far] != "5 tasks of 100, 5%, warn false" {
		t.Errorf("ps's headroom: uid %d %q, uid %d %q; want 5 of 6 warned and 5 of 100 not", near, got[near], far, got[far])
	}
	table := clitest.RunReaper(t, env, "ps")
	if w := clitest.GrepLines(table.Stdout, fmt.Sprintf("warning: uid %d ", near)); !strings.Contains(w, "83% of a process limit") {
		t.Errorf("ps's table does not warn of uid %d:\n%s", near, table.Stdout)
	}
	if strings.Contains(table.Stdout, fmt.Sprintf("uid %d ", far)) {
		t.Errorf("ps's table warns of uid %d, far from its limit:\n%s", far, table.Stdout)
	}
	d := clitest.RunReaper(t, env, "doctor")
	if w := clitest.GrepLines(d.Stdout, fmt.Sprintf("uid %d is at 83%%", near)); w == "" || !strings.Contains(d.Stdout, "warn  headroom") {
		t.Errorf("doctor does not warn of uid %d:\n%s", near, d.Stdout)
	}
}

// TestMetricsHoldNoCommandLine: two stand-in sessions each run a copy of
// a server whose command line holds a token (npm exec mcp-remote
// https://…?token=…). The watch's textfile and endpoint label the copies
// by the program (server="mcp-remote"), and neither they, nor ps's table
// and JSON, hold the token or the URL. The control: the servers' command
// lines do hold the token, so there was one to leak.
func TestMetricsHoldNoCommandLine(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("nocmd%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"")
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}
	secret := "BSECRET" + mark
	server := "npm exec mcp-remote https://mcp.internal.example/sse?token=" + secret
	var copies []int
	for i := range 2 {
		id := fmt.Sprintf("n%d-%s", i, clitest.Mark)
		owner := adopt(t, "session-owner-"+mark, fmt.Sprintf("export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait", id, server), nil)
		pid := childStarting(t, owner, server, "the server")
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		copies = append(copies, pid)
		writeSession(t, home, owner, id)
	}
	if !strings.Contains(clitest.CmdlineOf(copies[0]), secret) {
		t.Fatalf("control: the server's command line %q holds no token: the check proves nothing", clitest.CmdlineOf(copies[0]))
	}
	prom := t.TempDir() + "/reaper.prom"
	w := clitest.StartWatchEnv(t, env, pol, "--backstop", "1s", "--metrics", prom, "--metrics-listen", "127.0.0.1:0")
	var m []string
	clitest.WaitFor(t, func() bool { m = clitest.Announced.FindStringSubmatch(w.Stderr.String()); return m != nil }, "the endpoint's address")
	var text []byte
	clitest.WaitFor(t, func() bool {
		text, _ = os.ReadFile(prom)
		return strings.Contains(string(text), `reaper_server_copies{server="mcp-remote",`)
	}, "the copies in the textfile, labelled by their program")
	_, served := clitest.ScrapeOnce(t, m[1])
	ps := clitest.RunReaper(t, env, "ps", "--policy", pol)
	psJSON := clitest.RunReaper(t, env, "ps", "-o", "json", "--policy", pol)
	for what, out := range map[string]string{"the textfile": string(text), "the endpoint": served, "ps": ps.Stdout, "ps -o json": psJSON.Stdout} {
		if strings.Contains(out, secret) {
			t.Errorf("%s holds the server's token", what)
		}
		if what != "ps" && what != "ps -o json" && strings.Contains(out, "mcp.internal.example") {
			t.Errorf("%s holds the server's command line", what)
		}
	}
	if !strings.Contains(psJSON.Stdout, "token=[REDACTED]") {
		t.Errorf("ps -o json does not show the command redacted:\n%s", psJSON.Stdout)
	}
}

// childStarting is childWith for a child whose command line starts with
// prefix — its argv0, once it has exec'd: a subshell forked for
// `(exec -a NAME …) &` that has not, still shows its parent's command
// line, which holds every server the script names (taken for a server,
// one subshell was once returned for two).
func childStarting(t *testing.T, parent int, prefix, what string) int {
	t.Helper()
	return childMatching(t, parent, func(line string) bool { return strings.HasPrefix(line, prefix) }, what)
}

// Issue 64, item 13: the headroom's cgroup was the newest process's alone,
// so whether a user was warned depended on which process was newest. A
// user with 5 tasks in a pids cgroup of pids.max 6 whose newest process
// runs outside it is warned still (the tightest cgroup of the newest few);
// the control is TestHeadroom's user far from every limit.
func TestHeadroomTightestCgroup(t *testing.T) {
	clitest.RequireRoot(t)
	cg := pidsCgroup(t)
	if cg == "" {
		skips.Skip(t, "needs a pids cgroup this test can make (the v1 pids hierarchy, or v2 with pids delegated)")
	}
	if err := os.WriteFile(cg+"/pids.max", []byte("6"), 0o644); err != nil {
		t.Fatal(err)
	}
	uid := 45000 + os.Getpid()%5000
	start := func(join bool) {
		// Root moves the shell into the cgroup, then it becomes the user's
		// sleep; the newest is the user's from the start, outside it.
		c := exec.Command("bash", "-c", fmt.Sprintf("echo $$ > %s/cgroup.procs && exec setpriv --reuid %d --regid %d --clear-groups sleep 600", cg, uid, uid))
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if !join {
			c = exec.Command("sleep", "600")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		pid := c.Process.Pid
		t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL); c.Wait() })
		clitest.WaitFor(t, func() bool { return strings.HasPrefix(clitest.CmdlineOf(pid), "sleep") }, "the user's sleep")
	}
	for range 5 {
		start(true)
	}
	start(false) // the newest, outside the cgroup
	r := clitest.RunReaper(t, []string{"HOME=/", "XDG_CONFIG_HOME=/nonexistent", "CLAUDE_CONFIG_DIR="}, "ps", "-o", "json")
	var doc struct {
		Headroom []struct {
			UID         int
			Percent     int
			PIDsMax     uint64 `json:"pids_max"`
			PIDsCurrent uint64 `json:"pids_current"`
			Warn        bool
		}
	}
	json.Unmarshal([]byte(r.Stdout), &doc)
	for _, h := range doc.Headroom {
		if h.UID == uid {
			if h.PIDsMax != 6 || h.PIDsCurrent != 5 || !h.Warn {
				t.Errorf("uid %d: %+v; want the cgroup's 5 of 6, warned, though its newest process is outside it", uid, h)
			}
			return
		}
	}
	t.Errorf("uid %d not in the headroom: %s", uid, r.Stdout)
}

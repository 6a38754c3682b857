package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/schematest"
)

// TestPS: a Claude Code session (its session file names a live process)
// is listed with its tree — the MCP server it started among its
// processes, the memory the sum of theirs — and an orphan the policy
// names, started beside it, is in the orphans, in no session. Then the
// session's process is SIGKILLed: the session is ended, and its server,
// now an orphan, is listed among the orphans as that session's leftover.
// The JSON keeps to the shipped schema, and the table names the session.
func TestPS(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("ps%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"")
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}
	session := "s-" + clitest.Mark
	owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, "npm exec mcp-remote https://"+mark), nil)
	server := childWith(t, owner, mark, "the session's server")
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	writeSession(t, home, owner, session)
	stray := adopt(t, "npm exec mcp-remote https://stray."+mark, "sleep 600; exit 0", nil)

	ps := func() (*clitest.PSDoc, string) {
		t.Helper()
		r := clitest.RunReaper(t, env, "ps", "-o", "json", "--policy", pol)
		if r.Code != 0 {
			t.Fatalf("ps: exit %d\n%s", r.Code, r.Stderr)
		}
		clitest.ValidPS(t, r.Stdout)
		var doc clitest.PSDoc
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return &doc, r.Stdout
	}

	doc, out := ps()
	found := false
	for _, s := range doc.Sessions {
		if s.PID != owner {
			continue
		}
		found = true
		var sum uint64
		has := false
		for _, p := range s.Processes {
			sum += p.MemoryBytes
			has = has || p.PID == server && p.Kind == "mcp"
		}
		if s.Client != "claude-code" || s.Session != session || s.State == "ended" || !strings.Contains(s.Record, filepath.Join(home, ".claude", "sessions")) {
			t.Errorf("session %+v: want claude-code session %s from its session file", s, session)
		}
		if !has || len(s.Processes) != 2 || sum != s.MemoryBytes {
			t.Errorf("session's tree %+v: want the owner and its MCP server %d, memory the sum (%d)", s.Processes, server, sum)
		}
	}
	if !found {
		t.Fatalf("no session of pid %d:\n%s", owner, out)
	}
	orphan := func(doc *clitest.PSDoc, pid int) (string, string, bool) {
		for _, o := range doc.Orphans {
			if o.RootPID == pid {
				return o.Rule, o.SessionID, true
			}
		}
		return "", "", false
	}
	if rule, _, ok := orphan(doc, stray); !ok || rule != "watched" {
		t.Errorf("the stray server %d: orphan %v rule %q, want among the orphans under rule watched:\n%s", stray, ok, rule, out)
	}
	if _, _, ok := orphan(doc, server); ok {
		t.Errorf("the live session's server %d is listed as an orphan", server)
	}
	table := clitest.RunReaper(t, env, "ps", "--policy", pol)
	if !strings.Contains(table.Stdout, fmt.Sprintf("Claude Code 2.1.331  pid %d", owner)) || !strings.Contains(table.Stdout, "session "+session) {
		t.Errorf("the table does not name the session:\n%s", table.Stdout)
	}

	syscall.Kill(owner, syscall.SIGKILL)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(owner) }, "the session's process gone")
	doc, out = ps()
	if _, sid, ok := orphan(doc, server); !ok || sid != session {
		t.Errorf("after the session's end, its server %d: orphan %v of session %q, want of %s:\n%s", server, ok, sid, session, out)
	}
	ended := false
	for _, s := range doc.Sessions {
		if s.PID == owner {
			ended = s.State == "ended" && len(s.Leftovers) == 1 && s.Leftovers[0] == server
		}
	}
	if !ended {
		t.Errorf("no ended session of pid %d leaving %d:\n%s", owner, server, out)
	}
	// Its line says what its record says (the version, its start 90 s
	// before the file was written), not "up 0s" of a process that is gone.
	table = clitest.RunReaper(t, env, "ps", "--policy", pol)
	line := clitest.GrepLines(table.Stdout, fmt.Sprintf("pid %d  ended", owner))
	if !strings.Contains(line, "Claude Code 2.1.331") || !strings.Contains(line, "left behind  started ") || strings.Contains(line, " up ") {
		t.Errorf("the ended session's line %q: want its version, its leftovers' memory and its start as the record says:\n%s", line, table.Stdout)
	}
}

// TestPSScope: a process titled as a client's own (claude) is a session
// with no record; root's ps shows root's and nobody's, nobody's shows
// only nobody's (the control: the same table, another scope).
func TestPSScope(t *testing.T) {
	clitest.RequireRoot(t)
	dir, err := os.MkdirTemp("", "reaper-ps-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	sleep, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(bin, sleep, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(cred *syscall.Credential) int {
		c := exec.Command(bin, "600")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
		return c.Process.Pid
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	mine, theirs := start(nil), start(nobody)
	clitest.WaitFor(t, func() bool {
		return strings.HasPrefix(clitest.CmdlineOf(theirs), bin) && strings.HasPrefix(clitest.CmdlineOf(mine), bin)
	}, "the two sessions")
	sessions := func(r clitest.Result) map[int]string {
		t.Helper()
		if r.Code != 0 {
			t.Fatalf("ps: exit %d\n%s", r.Code, r.Stderr)
		}
		var doc struct {
			Sessions []struct {
				PID    int
				Client string
			}
		}
		json.Unmarshal([]byte(r.Stdout), &doc)
		out := map[int]string{}
		for _, s := range doc.Sessions {
			out[s.PID] = s.Client
		}
		return out
	}
	env := []string{"HOME=/", "XDG_CONFIG_HOME=/nonexistent", "CLAUDE_CONFIG_DIR="}
	asRoot := sessions(clitest.RunReaper(t, env, "ps", "-o", "json"))
	if asRoot[mine] != "claude-code" || asRoot[theirs] != "claude-code" {
		t.Errorf("root's ps: %v, want both %d and %d as claude-code sessions", asRoot, mine, theirs)
	}
	asNobody := sessions(runReaperAs(t, nobody, env, "ps", "-o", "json"))
	if _, ok := asNobody[mine]; ok || asNobody[theirs] != "claude-code" {
		t.Errorf("nobody's ps: %v, want %d and not root's %d", asNobody, theirs, mine)
	}
}

// TestEvidence: a session's MCP server started with secrets in its
// environment and on its command line outlives its session (SIGKILL);
// `reaper evidence PID` carries the evidence — owner-dead, the session,
// its record's excerpt, the home as ~ — and none of the secrets, in the
// Markdown and in the JSON, which keeps to evidence.schema.json. The
// control: the secrets are on the leftover (its cmdline and environment).
func TestEvidence(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("ev%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"")
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR="}
	session := "s-ev-" + clitest.Mark
	secrets := []string{"sk-proj-Zq81fJ2kLmN0pQr5sT7uV9wX", "ghp_4bC6dE8fG0hI2jK4lM6nO8pQ0rS2tU4v", "hunter2hunter2"}
	script := fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s OPENAI_API_KEY=%s; (exec -a %q sleep 600) & wait`, session, secrets[0],
		fmt.Sprintf("npm exec mcp-remote https://%s --token %s --password=%s", mark, secrets[1], secrets[2]))
	owner := adopt(t, "session-owner-"+mark, script, nil)
	server := childWith(t, owner, mark, "the session's server")
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	writeSession(t, home, owner, session)
	syscall.Kill(owner, syscall.SIGKILL)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(owner) }, "the session's process gone")
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", server))
	if !strings.Contains(clitest.CmdlineOf(server), secrets[1]) || !strings.Contains(string(environ), secrets[0]) {
		t.Fatalf("control: the leftover does not hold the secrets: %q", clitest.CmdlineOf(server))
	}

	md := clitest.RunReaper(t, env, "evidence", strconv.Itoa(server), "--policy", pol)
	js := clitest.RunReaper(t, env, "evidence", strconv.Itoa(server), "--policy", pol, "-o", "json")
	for _, r := range []clitest.Result{md, js} {
		if r.Code != 0 {
			t.Fatalf("evidence: exit %d\n%s", r.Code, r.Stderr)
		}
		for _, s := range secrets {
			if strings.Contains(r.Stdout, s) {
				t.Errorf("the bundle carries the secret %q:\n%s", s, r.Stdout)
			}
		}
		for _, want := range []string{"owner-dead", session, "[REDACTED]", "~/.claude/sessions/"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("the bundle lacks %q:\n%s", want, r.Stdout)
			}
		}
		if strings.Contains(r.Stdout, home) {
			t.Errorf("the bundle names the home %s, not ~", home)
		}
	}
	if !strings.Contains(md.Stdout, "## reaper evidence: "+strconv.Itoa(server)) || !strings.Contains(md.Stdout, "Redacted by reaper before printing:") {
		t.Errorf("the Markdown:\n%s", md.Stdout)
	}
	// The ended session: its client's version and its start from the
	// record, and no "tree of 0 processes" for a process that is gone.
	for _, want := range []string{"| client | Claude Code 2.1.331 |", "ended, started ", "### The session ended: its process is gone; it left 1 tree ("} {
		if !strings.Contains(md.Stdout, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md.Stdout)
		}
	}
	if strings.Contains(md.Stdout, "0 processes") || strings.Contains(md.Stdout, "up 0s") {
		t.Errorf("the Markdown calls the ended session a tree of 0 processes, or up 0s:\n%s", md.Stdout)
	}
	schema, _ := os.ReadFile("../../audit/evidence.schema.json")
	if errs, err := schematest.Validate(schema, []byte(js.Stdout)); err != nil || len(errs) > 0 {
		t.Errorf("evidence -o json does not keep to evidence.schema.json: %v %s", err, strings.Join(errs, "\n"))
	}
	var doc struct {
		Records []struct{ Path, Excerpt string }
	}
	json.Unmarshal([]byte(js.Stdout), &doc)
	if len(doc.Records) != 1 || !strings.Contains(doc.Records[0].Excerpt, session) {
		t.Errorf("the session file's excerpt: %+v", doc.Records)
	}
}

// TestPSKilo: Kilo's npm bin (a script, titled by its file name, kilo)
// and the native .kilo it starts are one Kilo session in ps, the wrapper
// its process and .kilo in its tree. The control: a process titled
// kilo-x is no session.
func TestPSKilo(t *testing.T) {
	dir := t.TempDir()
	sleep, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".kilo", "kilo-x"} {
		if err := os.WriteFile(filepath.Join(dir, name), sleep, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(dir, "kilo")
	os.WriteFile(script, []byte("#!/bin/bash\n\""+dir+"/.kilo\" 600 &\nwait\n"), 0o755)
	start := func(path string, args ...string) int {
		c := exec.Command(path, args...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
		return c.Process.Pid
	}
	wrapper, other := start(script), start(filepath.Join(dir, "kilo-x"), "600")
	var native int
	clitest.WaitFor(t, func() bool {
		kids := clitest.ChildrenOf(wrapper)
		if len(kids) == 1 && clitest.CommOf(kids[0]) == ".kilo" {
			native = kids[0]
		}
		return native > 0 && clitest.CommOf(other) == "kilo-x"
	}, "kilo's native child")
	r := clitest.RunReaper(t, []string{"XDG_CONFIG_HOME=" + dir}, "ps", "-o", "json")
	var doc clitest.PSDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("ps: exit %d: %v\n%s", r.Code, err, r.Stderr)
	}
	found := false
	for _, s := range doc.Sessions {
		switch s.PID {
		case wrapper:
			found = s.Client == "kilo" && len(s.Processes) == 2 && s.Processes[1].PID == native && s.Processes[1].Kind == "client"
		case native, other:
			t.Errorf("pid %d (%s) is a session of its own: %+v", s.PID, clitest.CommOf(s.PID), s)
		}
	}
	if !found {
		t.Errorf("no Kilo session of the wrapper %d with .kilo %d in its tree:\n%s", wrapper, native, r.Stdout)
	}
}

// Issue 64, item 12: ps cut every line at ~120 columns, piped or with
// COLUMNS=250, hiding the end of a long command line (and the duplicates'
// `claude mcp add …` advice). Piped, a line is whole; with COLUMNS=N it is
// cut at N, and N reaches past the old cut. The control: COLUMNS=60 cuts
// it there.
func TestPSWidth(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("pswidth%d", os.Getpid())
	home := t.TempDir()
	session := "s-width-" + clitest.Mark
	long := "npm exec mcp-remote https://" + mark + "/" + strings.Repeat("x", 300) + "/END"
	owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, long), nil)
	server := childWith(t, owner, mark, "the session's server")
	t.Cleanup(func() { syscall.Kill(server, syscall.SIGKILL) })
	writeSession(t, home, owner, session)
	line := func(columns string) string {
		t.Helper()
		r := clitest.RunReaper(t, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=", "COLUMNS=" + columns}, "ps")
		for _, l := range strings.Split(r.Stdout, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == strconv.Itoa(server) {
				return l
			}
		}
		t.Fatalf("ps (COLUMNS=%q): no line of server %d\n%s%s", columns, server, r.Stdout, r.Stderr)
		return ""
	}
	if l := line(""); !strings.HasSuffix(l, "/END 600") {
		t.Errorf("piped: the server's line is cut: %q", l)
	}
	if l := line("250"); len([]rune(l)) != 250 {
		t.Errorf("COLUMNS=250: a line of %d columns, want 250: %q", len([]rune(l)), l)
	}
	if l := line("60"); len([]rune(l)) != 60 {
		t.Errorf("control, COLUMNS=60: a line of %d columns, want 60: %q", len([]rune(l)), l)
	}
}

package scan

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

const gatewayUnit = "/user.slice/user-1000.slice/user@1000.service/app.slice/openclaw-gateway.service"

// p builds a live process; argv, env and cgroup are its details.
func p(pid, ppid int, comm string, argv []string, env []string, cg string) platform.Process {
	return platform.Process{PID: pid, PPID: ppid, PGID: pid, SID: pid, State: 'S', Comm: comm,
		StartTicks: uint64(pid) * 100, RSS: uint64(pid) * 1024, UID: 1000}.
		WithDetails(argv, env, platform.Cgroup{Unified: cg})
}

func zombie(pid, ppid int) platform.Process {
	return platform.Process{PID: pid, PPID: ppid, State: 'Z', Comm: "defunct"}
}

func snapshot(procs ...platform.Process) *platform.Snapshot {
	base := []platform.Process{
		p(1, 0, "systemd", []string{"/sbin/init"}, nil, "/init.scope"),
		{PID: 2, PPID: 0, Comm: "kthreadd", Flags: 0x00200000, State: 'S'},
		{PID: 3, PPID: 2, Comm: "kworker/0:1", Flags: 0x00200000, State: 'I'},
		p(10, 1, "systemd", []string{"/lib/systemd/systemd", "--user"}, nil, "/user.slice/user@1000.service/init.scope"),
	}
	return platform.NewSnapshot(append(base, procs...), "boot", 10*time.Hour, time.Unix(0, 0))
}

var testConfig = Config{
	Owners: []Owner{{
		Name:    "openclaw-gateway",
		Cmdline: regexp.MustCompile(`(^|/)openclaw-gateway( |$)|dist/entry\.js gateway`),
		PIDEnv:  "OPENCLAW_GATEWAY_SERVICE_PID",
		Cgroup:  regexp.MustCompile(`/openclaw-gateway(-[^/]+)?\.service$`),
	}},
	Subreapers: []Subreaper{{Cmdline: regexp.MustCompile(`^/usr/bin/tini `)}},
	Marks:      testMarks,
}

// testMarks are clients' marks as their adapters declare them: OpenClaw's,
// and the agent CLIs' (claude, codex) that every client launches, written
// out here (scan's tests cannot import an adapter, which imports scan).
var testMarks = Marks{
	Env: []EnvMark{
		{Env: "OPENCLAW_SHELL", Value: "acp", Kind: KindACP},
		{Env: "OPENCLAW_SHELL", Value: "exec", Kind: KindExec},
	},
	Commands: []CommandMark{
		{Cmdline: MustPattern(`-acp-wrapper\.mjs|--openclaw-acpx-lease-id|/acpx/dist/|(^|/)acpx( |$)`), Kind: KindACP},
		{Cmdline: MustPattern(`claude-agent-acp|claude-code-acp|(^|/)claude( |$)`), Kind: KindACP},
		{Cmdline: MustPattern(`codex-acp|(^|/)codex( |$)`), Kind: KindACP},
	},
	Supervisors: []SupervisorMark{
		{Cmdline: MustPattern(`/process/spawn-broker/worker\.js( |$)`), Role: "OpenClaw spawn broker", Note: "it cleans up"},
		{Cmdline: MustPattern(`/process/supervisor/service-child-relay\.js( |$)`), Role: "OpenClaw service-child relay", Note: "it cleans up"},
		{Cmdline: MustPattern(`/process/supervisor/service-child-group-anchor\.js( |$)`), Role: "OpenClaw group anchor", Note: "it cleans up"},
	},
}

// gatewayTies are the ties a client's adapter makes of a state dir's lock
// (OpenClaw's, written out: by the dir its survivors name, OPENCLAW_SHELL
// strong; in a default dir by OPENCLAW_SHELL alone).
func gatewayTies(dir string, def bool, uid uint32, owner ledger.Owner, lock string, since time.Time) []Tie {
	t := Tie{Env: "OPENCLAW_STATE_DIR", Value: dir, Strong: "OPENCLAW_SHELL", Since: since, Owner: owner, Speaker: uid,
		Where: "state dir " + dir, Proof: "the gateway lock " + lock, Noun: "gateway"}
	out := []Tie{t}
	if def {
		t.Env, t.Value, t.Unless = "OPENCLAW_SHELL", "", "OPENCLAW_STATE_DIR"
		out = append(out, t)
	}
	return out
}

// got reduces findings to "root:reason,reason" for comparison.
func got(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		var rs []string
		for _, x := range f.Reasons {
			rs = append(rs, string(x))
		}
		out = append(out, strings.Join([]string{strconv.Itoa(f.Root.PID), strings.Join(rs, ",")}, ":"))
	}
	return out
}

func TestScanFindings(t *testing.T) {
	gateway := func(pid, ppid int) platform.Process {
		return p(pid, ppid, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, gatewayUnit)
	}
	tests := []struct {
		name  string
		procs []platform.Process
		want  []string
	}{
		{
			name:  "reparented to PID 1, nothing attributes it",
			procs: []platform.Process{p(100, 1, "node", []string{"node", "mcp.js"}, nil, "/")},
			want:  []string{"100:reparented,untracked"},
		},
		{
			name:  "reparented to systemd --user",
			procs: []platform.Process{p(100, 10, "node", []string{"node", "mcp.js"}, nil, "/")},
			want:  []string{"100:reparented,untracked"},
		},
		{
			name: "a systemd that is not a user manager adopts nothing",
			procs: []platform.Process{
				p(50, 1, "systemd", []string{"/lib/systemd/systemd-journald"}, nil, "/"),
				p(100, 50, "node", []string{"node", "mcp.js"}, nil, "/"),
			},
			want: []string{"50:reparented,untracked"},
		},
		{
			name: "named subreaper",
			procs: []platform.Process{
				p(50, 1, "tini", []string{"/usr/bin/tini", "--", "app"}, nil, "/"),
				p(100, 50, "uvx", []string{"uvx", "mcp-server-fetch"}, nil, "/"),
			},
			want: []string{"100:reparented,untracked"}, // the subreaper itself is never a root
		},
		{
			name: "a child of a live ordinary parent is not an orphan",
			procs: []platform.Process{
				p(50, 10, "bash", []string{"bash"}, nil, "/"),
				p(100, 50, "node", []string{"node", "mcp.js"}, nil, "/"),
			},
			want: []string{"50:reparented,untracked"},
		},
		{
			name:  "a live owner is not a finding",
			procs: []platform.Process{gateway(200, 10), p(201, 200, "npx", []string{"npx", "x-mcp"}, nil, gatewayUnit)},
			want:  nil,
		},
		{
			name: "orphans adopted by a subreaper inside a live owner's tree",
			procs: []platform.Process{
				gateway(200, 10),
				p(210, 200, "tini", []string{"/usr/bin/tini", "--", "x"}, nil, gatewayUnit),
				p(211, 210, "node", []string{"node", "mcp.js"}, nil, gatewayUnit),
			},
			want: nil,
		},
		{
			name: "env marker names a live owner: reparented, owner known, not owner-dead",
			procs: []platform.Process{
				gateway(200, 10),
				p(300, 10, "grep", []string{"grep", "x"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=200"}, "/"),
			},
			want: []string{"300:reparented"},
		},
		{
			name: "env marker names a gone pid",
			procs: []platform.Process{
				p(300, 10, "node", []string{"node", "mcp.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=250"}, "/"),
			},
			want: []string{"300:reparented,owner-dead"},
		},
		{
			name: "env marker names a zombie gateway",
			procs: []platform.Process{
				zombie(250, 10),
				p(300, 10, "node", []string{"node", "mcp.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=250"}, "/"),
			},
			want: []string{"300:reparented,owner-dead"},
		},
		{
			name: "env marker names a pid reused by another program",
			procs: []platform.Process{
				p(250, 1, "postgres", []string{"postgres"}, nil, "/system.slice/postgresql.service"),
				p(300, 10, "node", []string{"node", "mcp.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=250"}, "/"),
			},
			// postgres is its service's own process: not a finding itself.
			want: []string{"300:reparented,owner-dead"},
		},
		{
			name: "env marker that is not a pid attributes, proves nothing dead",
			procs: []platform.Process{
				p(300, 10, "node", []string{"node", "mcp.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=abc"}, "/"),
			},
			want: []string{"300:reparented"},
		},
		{
			name: "unit cgroup with a live gateway: attributed, not dead",
			procs: []platform.Process{
				gateway(200, 10),
				p(300, 10, "node", []string{"node", "mcp.js"}, nil, gatewayUnit),
			},
			want: []string{"300:reparented"},
		},
		{
			name: "unit cgroup with no live gateway",
			procs: []platform.Process{
				p(300, 10, "node", []string{"node", "mcp.js"}, nil, gatewayUnit),
			},
			want: []string{"300:reparented,owner-dead"},
		},
		{
			name: "previous generation: cgroup has the new gateway, marker names the old one",
			procs: []platform.Process{
				gateway(200, 10),
				p(300, 10, "node", []string{"node", "mcp.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=150"}, gatewayUnit),
			},
			want: []string{"300:reparented,owner-dead"},
		},
		{
			name: "zombies, kernel threads and hidden parents are never findings",
			procs: []platform.Process{
				zombie(400, 1),
				p(500, 450, "node", []string{"node", "mcp.js"}, nil, "/"),
				p(510, 0, "sleep", []string{"sleep", "1"}, nil, "/"),
			},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(tt.procs...), testConfig)
			// 10 (systemd --user) is itself a child of PID 1 but a subreaper.
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("findings %q, want %q", g, tt.want)
			}
		})
	}
}

func TestSubreaperComm(t *testing.T) {
	cfg := testConfig
	cfg.Subreapers = []Subreaper{{Comm: regexp.MustCompile(`^tini$`), Cmdline: regexp.MustCompile(`^/usr/bin/tini `)}}
	r := scanTable(snapshot(
		p(50, 1, "tini", []string{"/usr/bin/tini", "--", "app"}, nil, "/"),
		p(100, 50, "uvx", []string{"uvx", "mcp-server-fetch"}, nil, "/"),
		p(60, 1, "tini-x", []string{"/usr/bin/tini", "--", "app"}, nil, "/"),
		p(110, 60, "uvx", []string{"uvx", "mcp-server-fetch"}, nil, "/"),
	), cfg)
	if g, want := got(r), []string{"60:reparented,untracked", "100:reparented,untracked"}; !reflect.DeepEqual(g, want) {
		t.Errorf("findings %q, want %q", g, want)
	}
}

func TestScanEvidenceAndOwner(t *testing.T) {
	r := scanTable(snapshot(
		p(250, 1, "postgres", []string{"postgres"}, nil, "/"),
		p(300, 10, "node", []string{"node", "mcp.js"}, []string{"OPENCLAW_GATEWAY_SERVICE_PID=250"}, gatewayUnit),
	), testConfig)
	f := r.Findings[len(r.Findings)-1]
	if f.Owner != "openclaw-gateway" || f.OwnerPID != 250 {
		t.Errorf("owner %q pid %d", f.Owner, f.OwnerPID)
	}
	want := []string{
		"its parent 10 (systemd) is a subreaper",
		`OPENCLAW_GATEWAY_SERVICE_PID=250: pid now belongs to "postgres", not openclaw-gateway`,
		"cgroup " + gatewayUnit + " has no live openclaw-gateway",
	}
	if !reflect.DeepEqual(f.Evidence, want) {
		t.Errorf("evidence\n%q\nwant\n%q", f.Evidence, want)
	}
}

func TestScanMembersZombiesUnknown(t *testing.T) {
	s := snapshot(
		p(100, 1, "npm exec mcp-re", []string{"npm exec mcp-remote https://x"}, nil, "/"),
		p(101, 100, "node", []string{"node", "proxy.js"}, nil, "/"),
		p(102, 101, "node", []string{"node", "worker.js"}, nil, "/"),
		p(103, 100, "sh", []string{"sh"}, nil, "/"),
		zombie(104, 101),
		p(200, 450, "node", []string{"node"}, nil, "/"),
	)
	r := scanTable(s, testConfig)
	if len(r.Findings) != 1 {
		t.Fatalf("%d findings, want 1", len(r.Findings))
	}
	f := r.Findings[0]
	var members []string
	for _, m := range f.Members {
		members = append(members, strconv.Itoa(m.Proc.PID)+"@"+strconv.Itoa(m.Depth))
	}
	if want := []string{"100@0", "101@1", "102@2", "103@1"}; !reflect.DeepEqual(members, want) {
		t.Errorf("members %q, want %q (zombie 104 left out)", members, want)
	}
	if want := uint64(100+101+102+103) * 1024; f.RSS != want {
		t.Errorf("RSS %d, want %d", f.RSS, want)
	}
	if !reflect.DeepEqual(f.PIDs(), []int{100, 101, 102, 103}) {
		t.Errorf("PIDs %v", f.PIDs())
	}
	if f.Kind != KindMCP {
		t.Errorf("kind %q, want mcp", f.Kind)
	}
	if len(r.Zombies) != 1 || r.Zombies[0].Proc.PID != 104 || r.Zombies[0].Parent.PID != 101 {
		t.Errorf("zombies %+v", r.Zombies)
	}
	if len(r.Unknown) != 1 || r.Unknown[0].Proc.PID != 200 {
		t.Errorf("unknown %+v", r.Unknown)
	}
}

func TestClassify(t *testing.T) {
	pts := func(pr platform.Process) platform.Process {
		pr.TTY = 136<<8 | 4
		return pr
	}
	tests := []struct {
		name string
		proc platform.Process
		want Kind
	}{
		{"pty session leader", pts(p(100, 1, "bash", []string{"bash", "-lc", "npm test"}, nil, "/")), KindPTY},
		{"pty but not leader is not pty", func() platform.Process {
			x := pts(p(100, 1, "bash", []string{"bash"}, nil, "/"))
			x.SID = 99
			return x
		}(), KindOther},
		{"pty leader whose master is gone (tty cleared, stdio on a deleted pts)",
			p(100, 1, "bash", []string{"bash", "-c", "npm test"}, nil, "/").WithStdio("/dev/pts/7 (deleted)"), KindPTY},
		{"a setsid'd MCP server keeping a terminal on its stdio is mcp: what it is, before how it is attached",
			p(100, 1, "node", []string{"node", "/x/node_modules/@upstash/context7-mcp/dist/index.js"}, nil, "/").WithStdio("/dev/pts/3"), KindMCP},
		{"claude leading a session on a terminal is acp", pts(p(100, 1, "claude", []string{"claude"}, nil, "/")), KindACP},
		{"a shell on a terminal is pty, whatever it runs", pts(p(100, 1, "bash", []string{"/bin/bash", "-c", "npx -y @upstash/context7-mcp"}, nil, "/")), KindPTY},
		{"a login shell on a terminal is pty", pts(p(100, 1, "bash", []string{"-bash"}, nil, "/")), KindPTY},
		{"another program leading a session on a terminal, nothing else known, is pty", pts(p(100, 1, "npm", []string{"npm", "test"}, nil, "/")), KindPTY},
		{"leader with stdio on /dev/null is not pty",
			p(100, 1, "npm exec x", []string{"npm exec x"}, nil, "/").WithStdio("/dev/null"), KindOther},
		{"acp wrapper", p(100, 1, "node", []string{"/usr/bin/node", "/h/.openclaw/acpx/codex-acp-wrapper.mjs"}, nil, "/"), KindACP},
		{"claude with mcp config is acp", p(100, 1, "claude", []string{"claude", "--mcp-config", "/tmp/m.json"}, nil, "/"), KindACP},
		{"codex app-server", p(100, 1, "codex", []string{"/opt/codex", "app-server", "--listen", "stdio://"}, nil, "/"), KindACP},
		{"claude-agent-acp", p(100, 1, "node", []string{"node", "/x/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"}, nil, "/"), KindACP},
		{"mcp-remote", p(100, 1, "npm exec mcp-re", []string{"npm exec mcp-remote https://x"}, nil, "/"), KindMCP},
		{"sdk server", p(100, 1, "node", []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, nil, "/"), KindMCP},
		{"*-mcp package", p(100, 1, "npx", []string{"npx", "-y", "@upstash/context7-mcp"}, nil, "/"), KindMCP},
		{"mcp-server-*", p(100, 1, "uvx", []string{"uvx", "mcp-server-fetch"}, nil, "/"), KindMCP},
		{"acp by env", p(100, 1, "node", []string{"node", "x.js"}, []string{"OPENCLAW_SHELL=acp"}, "/"), KindACP},
		{"exec by env", p(100, 1, "sh", []string{"sh", "-c", "make"}, []string{"OPENCLAW_SHELL=exec"}, "/"), KindExec},
		{"other", p(100, 1, "postgres", []string{"postgres"}, nil, "/"), KindOther},
		{"mcpd is not mcp", p(100, 1, "mcpd", []string{"/usr/sbin/mcpd"}, nil, "/"), KindOther},
		{"an npm shim of an MCP server is mcp", p(100, 1, "cmd.exe", []string{`C:\\WINDOWS\\system32\\cmd.exe`, "/d", "/s", "/c", "npx -y @modelcontextprotocol/server-filesystem C:\\src"}, nil, "/"), KindMCP},
		{"PowerShell on a terminal is a shell", pts(p(100, 1, "pwsh.exe", []string{`C:\\Program Files\\PowerShell\\7\\pwsh.exe`, "-Command", "npx -y @upstash/context7-mcp"}, nil, "/")), KindPTY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot(tt.proc)
			if got := testConfig.Classify(s, s.Get(tt.proc.PID)); got != tt.want {
				t.Errorf("Classify = %q, want %q", got, tt.want)
			}
		})
	}
}

// Windows' pseudo-console host is the PTY of a Windows table; a console
// host with a window is not, and no other system's table has the host
// (the control: the same command line on a Linux table is other).
func TestClassifyWindowsPTYHost(t *testing.T) {
	created := time.Unix(36000, 0)
	for _, tt := range []struct {
		name, cmdline string
		want          Kind
	}{
		{"conhost --headless", `\\??\\C:\\WINDOWS\\system32\\conhost.exe --headless --width 80`, KindPTY},
		{"Windows Terminal's OpenConsole", "OpenConsole.exe --headless --signal 0x5a4", KindPTY},
		{"a console host with a window", `C:\\WINDOWS\\system32\\conhost.exe 0xffffffff -ForceV1`, KindOther},
	} {
		s := platform.WindowsSnapshot([]platform.WinProc{{PID: 100, PPID: 90, Created: created, Image: "conhost.exe", UID: 1001, Cmdline: tt.cmdline}},
			created.Add(time.Hour), created.Add(-time.Hour), nil)
		if got := testConfig.Classify(s, s.Get(100)); got != tt.want {
			t.Errorf("%s: Classify = %q, want %q", tt.name, got, tt.want)
		}
	}
	linux := snapshot(p(100, 1, "conhost.exe", []string{"conhost.exe", "--headless"}, nil, "/"))
	if got := testConfig.Classify(linux, linux.Get(100)); got != KindOther {
		t.Errorf("control, a Linux table: Classify = %q, want other", got)
	}
}

func TestTreeCycleTerminates(t *testing.T) {
	// A racy read can see A's parent as B and B's as A after pid reuse.
	s := snapshot(
		p(100, 101, "a", nil, nil, "/"),
		p(101, 100, "b", nil, nil, "/"),
	)
	tr := NewTree(s)
	root := s.Index(100)
	if tr.Parent(root) >= 0 {
		root = tr.Parent(root)
	}
	n := 0
	tr.Walk(root, func(i, depth int) { n++ })
	if n != 2 {
		t.Errorf("walked %d processes from the loop's root, want 2", n)
	}
	// One link of the loop is cut: each process's ancestors are the other
	// at most, and exactly one of the two still has its parent.
	links := 0
	for _, pid := range []int{100, 101} {
		var up []int
		tr.Ancestors(s.Index(pid), func(j int) bool { up = append(up, s.Procs[j].PID); return true })
		if len(up) > 1 || len(up) == 1 && up[0] == pid {
			t.Errorf("ancestors of %d: %v", pid, up)
		}
		links += len(up)
	}
	if links != 1 {
		t.Errorf("%d parent links left of the loop's 2, want 1", links)
	}
	// A longer loop below a tail: the tail's ancestors are each member once.
	s = snapshot(
		p(200, 100, "tail", nil, nil, "/"),
		p(100, 101, "a", nil, nil, "/"),
		p(101, 102, "b", nil, nil, "/"),
		p(102, 100, "c", nil, nil, "/"),
	)
	tr = NewTree(s)
	var up []int
	tr.Ancestors(s.Index(200), func(j int) bool { up = append(up, s.Procs[j].PID); return true })
	if fmt.Sprint(up) != "[100 101 102]" {
		t.Errorf("ancestors of the tail: %v, want [100 101 102]", up)
	}
	n = 0
	tr.Walk(s.Index(102), func(int, int) { n++ })
	if n != 4 {
		t.Errorf("the walk from the loop's root visits %d processes, want all 4 once", n)
	}
}

// A stdio MCP server that a gateway's config names, with a command line no
// fingerprint knows, is kind mcp once the config is applied — and only a
// finding of kind other changes.
func TestApplyMCPServers(t *testing.T) {
	snap := snapshot(
		p(100, 1, "docs-helper", []string{"/opt/tools/docs-helper", "--stdio", "/srv/docs"}, nil, "/"),
		p(101, 1, "docs-helper", []string{"/opt/tools/docs-helper", "--stdio", "/srv/other"}, nil, "/"),
		p(102, 1, "codex", []string{"codex", "app-server", "--stdio", "/srv/docs"}, nil, "/"),
	)
	r := scanTable(snap, testConfig)
	kinds := func() map[int]Kind {
		m := map[int]Kind{}
		for _, f := range r.Findings {
			m[f.Root.PID] = f.Kind
		}
		return m
	}
	if k := kinds(); k[100] != KindOther || k[101] != KindOther || k[102] != KindACP {
		t.Fatalf("before the config: %v", k)
	}
	r.ApplyServers([]Server{
		{Name: "docs", Command: "docs-helper", Args: []string{"--stdio", "/srv/docs"}, File: "/home/a/.openclaw/openclaw.json"},
		{Name: "codex-lookalike", Command: "codex", Args: []string{"app-server", "--stdio", "/srv/docs"}, File: "x"},
	})
	if k := kinds(); k[100] != KindMCP || k[101] != KindOther || k[102] != KindACP {
		t.Errorf("after the config: %v, want 100 mcp, 101 other, 102 still acp", k)
	}
	for _, f := range r.Findings {
		if f.Root.PID == 100 && !strings.Contains(strings.Join(f.Evidence, "; "), `MCP server "docs" of /home/a/.openclaw/openclaw.json`) {
			t.Errorf("evidence %q does not name the config", f.Evidence)
		}
	}
}

// A direct child of PID 1 or of a systemd user manager that is its own
// service's process was started there on purpose; an orphan keeps the
// cgroup of the unit or scope it came from. Each case has its control:
// the same process in a scope, or under another unit, is a finding.
func TestScanServicesAreNotOrphans(t *testing.T) {
	const userApps = "/user.slice/user-1000.slice/user@1000.service/app.slice/"
	mcp := []string{"npx", "-y", "@modelcontextprotocol/server-memory"}
	tests := []struct {
		name  string
		procs []platform.Process
		want  []string
	}{
		{"an MCP server run as a user's own service", []platform.Process{p(100, 10, "node", mcp, nil, userApps+"mcp-memory.service")}, nil},
		{"a system service's main process", []platform.Process{p(100, 1, "node", mcp, nil, "/system.slice/mcp-memory.service")}, nil},
		{"control: the same server in a terminal's scope", []platform.Process{p(100, 10, "node", mcp, nil, userApps+"app-gnome-terminal-1234.scope")},
			[]string{"100:reparented,untracked"}},
		{"control: the same server in a login session", []platform.Process{p(100, 1, "node", mcp, nil, "/user.slice/user-1000.slice/session-3.scope")},
			[]string{"100:reparented,untracked"}},
		{"control: left in the gateway's unit", []platform.Process{p(100, 10, "node", mcp, nil, gatewayUnit)},
			[]string{"100:reparented,owner-dead"}},
		{"control: a live gateway in the same unit", []platform.Process{
			p(90, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, userApps+"agents.service"),
			p(100, 10, "node", mcp, nil, userApps+"agents.service")},
			[]string{"100:reparented,untracked"}},
		{"control: a service's process carrying a gateway's pid marker", []platform.Process{
			p(100, 10, "node", mcp, []string{"OPENCLAW_GATEWAY_SERVICE_PID=4242"}, userApps+"mcp-memory.service")},
			[]string{"100:reparented,owner-dead"}},
		{"the command tini was started to run", []platform.Process{
			p(50, 1, "tini", []string{"/usr/bin/tini", "-g", "--", "node", "server.js", "--mcp"}, nil, "/"),
			p(100, 50, "node", []string{"node", "server.js", "--mcp"}, nil, "/")}, nil},
		{"control: another child tini adopted", []platform.Process{
			p(50, 1, "tini", []string{"/usr/bin/tini", "-g", "--", "node", "server.js", "--mcp"}, nil, "/"),
			p(100, 50, "node", []string{"node", "mcp-remote.js"}, nil, "/")},
			[]string{"100:reparented,untracked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanTable(snapshot(tt.procs...), testConfig)
			if g := got(r); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("findings %v, want %v", g, tt.want)
			}
		})
	}
}

// With many owners, the one a process is stays that one: the per-process
// cache once held the owner's index in 8 bits, which wrapped at 127 owners
// and made a live gateway (here matched by the 130th owner, gw129) a finding of
// its own. The control: without its owner entry the gateway is a finding.
func TestManyOwners(t *testing.T) {
	gateway := p(200, 10, "node", []string{"node", "/opt/gw129/dist/entry.js", "gateway"}, nil, "/")
	var cfg Config
	for k := 0; k < 130; k++ {
		cfg.Owners = append(cfg.Owners, Owner{Name: "gw" + strconv.Itoa(k), Cmdline: regexp.MustCompile(`/opt/gw` + strconv.Itoa(k) + `/`)})
	}
	if g := got(scanTable(snapshot(gateway), cfg)); len(g) != 0 {
		t.Errorf("findings %v: the live owner gw129 is reported", g)
	}
	cfg.Owners = cfg.Owners[:129]
	if g := got(scanTable(snapshot(gateway), cfg)); !reflect.DeepEqual(g, []string{"200:reparented,untracked"}) {
		t.Errorf("control: findings %v, want the gateway without its owner entry", g)
	}
}

// OpenClaw's supervisor processes (spawn broker → relay → group anchor →
// the command) reparented after a crash: the finding's kind is the kind
// of the command they anchor, and it is marked as the supervisor's own
// cleanup. The control: the same tree without the supervisor's scripts.
func TestOpenClawSupervisorTree(t *testing.T) {
	const dist = "/usr/lib/node_modules/openclaw/dist/process/"
	tree := func(broker, relay, anchor string) []platform.Process {
		return []platform.Process{
			p(400, 1, "node", []string{"node", dist + broker}, nil, "/"),
			p(401, 400, "node", []string{"node", dist + relay}, nil, "/"),
			p(402, 401, "node", []string{"node", dist + anchor}, nil, "/"),
			p(403, 402, "npm", []string{"npm", "exec", "@modelcontextprotocol/server-memory"}, nil, "/"),
		}
	}
	r := scanTable(snapshot(tree("spawn-broker/worker.js", "supervisor/service-child-relay.js", "supervisor/service-child-group-anchor.js")...), testConfig)
	if len(r.Findings) != 1 {
		t.Fatalf("findings %v", got(r))
	}
	f := r.Findings[0]
	if f.Kind != KindMCP || f.Supervisor != "OpenClaw spawn broker" || !strings.Contains(strings.Join(f.Evidence, " "), "anchoring") {
		t.Errorf("kind %s supervisor %q evidence %v, want mcp under the spawn broker", f.Kind, f.Supervisor, f.Evidence)
	}
	r = scanTable(snapshot(tree("worker.js", "relay.js", "anchor.js")...), testConfig)
	if f := r.Findings[0]; f.Kind != KindOther || f.Supervisor != "" {
		t.Errorf("control: kind %s supervisor %q, want other and none", f.Kind, f.Supervisor)
	}
}

func TestServerMatches(t *testing.T) {
	npx := Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}
	docs := Server{Command: "/opt/tools/docs-helper", Args: []string{"--stdio", "/srv/docs"}}
	bare := Server{Command: "node"}
	for _, tc := range []struct {
		s    Server
		argv []string
		want bool
	}{
		{docs, []string{"/opt/tools/docs-helper", "--stdio", "/srv/docs"}, true},
		{docs, []string{"docs-helper", "--stdio", "/srv/docs"}, true}, // resolved on PATH
		{docs, []string{"docs-helper", "--stdio", "/srv/other"}, false},
		{docs, []string{"docs-helper", "--stdio"}, false},
		{docs, []string{"docs-helper", "--stdio", "/srv/docs", "--extra"}, false},
		{docs, []string{"other-helper", "--stdio", "/srv/docs"}, false},
		// npx once running: its title, one string in /proc/PID/cmdline
		// (seen on this machine with npm 10), without -y.
		{npx, []string{"npm exec @modelcontextprotocol/server-filesystem /tmp"}, true},
		{npx, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, true},
		{npx, []string{"npm exec @modelcontextprotocol/server-filesystem /home"}, false},
		{npx, []string{"npm exec"}, false},
		{bare, []string{"node"}, false}, // a bare interpreter identifies nothing
		{bare, nil, false},
	} {
		if got := tc.s.Matches(tc.argv); got != tc.want {
			t.Errorf("%s %v ~ %q: %v, want %v", tc.s.Command, tc.s.Args, tc.argv, got, tc.want)
		}
	}
}

// A server configured as a script, a bare name on PATH, an npm or pipx
// global bin, or a uvx or pipx tool matches its process however the
// kernel or the launcher ran it: the interpreter first (after env, which
// execs it), interpreter flags, the script as exec'd, then exactly the
// configured arguments. The controls: another script, other arguments,
// the script as an argument of something else, and an interpreter
// configured by name with no script.
func TestServerMatchesThroughInterpreter(t *testing.T) {
	script := Server{Command: "/srv/mcp/server.py", Args: []string{"--root", "/srv/docs"}}
	onPath := Server{Command: "mcp-weather", Args: []string{"--stdio"}}
	global := Server{Command: "/usr/local/bin/gh-mcp"}
	uvx := Server{Command: "uvx", Args: []string{"mcp-server-fetch@2025.4.7", "--ignore-robots-txt"}}
	pipx := Server{Command: "pipx", Args: []string{"run", "mcp-server-time"}}
	for _, tc := range []struct {
		s    Server
		argv []string
		want bool
	}{
		{script, []string{"/usr/bin/python3", "/srv/mcp/server.py", "--root", "/srv/docs"}, true}, // #!/usr/bin/python3
		{script, []string{"python3", "-u", "/srv/mcp/server.py", "--root", "/srv/docs"}, true},    // #!/usr/bin/env -S python3 -u
		{script, []string{"/srv/mcp/server.py", "--root", "/srv/docs"}, true},                     // a native binary after all
		{script, []string{"python3", "/srv/mcp/server.py", "--root", "/srv/other"}, false},
		{script, []string{"python3", "/srv/mcp/other.py", "--root", "/srv/docs"}, false},
		{script, []string{"python3", "-c", "/srv/mcp/server.py", "--root", "/srv/docs"}, false}, // -c runs its argument, but "-c" here is no script
		{script, []string{"python3", "tool.py", "/srv/mcp/server.py", "--root", "/srv/docs"}, false},
		{onPath, []string{"node", "/home/a/.local/bin/mcp-weather", "--stdio"}, true}, // found on PATH by the client
		{onPath, []string{"node", "/home/a/.local/bin/mcp-weather"}, false},
		{global, []string{"node", "/usr/local/bin/gh-mcp"}, true}, // the npm global bin, a symlink the kernel ran as exec'd
		{global, []string{"node", "/usr/lib/node_modules/gh-mcp/dist/index.js"}, false},
		{uvx, []string{"/root/.cache/uv/archive-v0/x/bin/python", "/root/.cache/uv/archive-v0/x/bin/mcp-server-fetch", "--ignore-robots-txt"}, true},
		{uvx, []string{"/root/.cache/uv/archive-v0/x/bin/python", "/root/.cache/uv/archive-v0/x/bin/mcp-server-fetch"}, false},
		{pipx, []string{"/root/.local/pipx/venvs/mcp-server-time/bin/python", "/root/.local/pipx/venvs/mcp-server-time/bin/mcp-server-time"}, true},
		{Server{Command: "python3", Args: nil}, []string{"python3", "/srv/mcp/server.py"}, false},
	} {
		if got := tc.s.Matches(tc.argv); got != tc.want {
			t.Errorf("%s %v ~ %q: %v, want %v", tc.s.Command, tc.s.Args, tc.argv, got, tc.want)
		}
	}
}

// ApplyServers finds a script server by the script its interpreter runs:
// the finding's root is python3, the index is the script's name.
func TestApplyServersScript(t *testing.T) {
	r := scanTable(snapshot(p(500, 1, "python3", []string{"/usr/bin/python3", "/srv/tools/docs.py", "--root", "/srv/docs"}, nil, "/")), testConfig)
	if len(r.Findings) != 1 {
		t.Fatalf("findings %+v", r.Findings)
	}
	if r.Findings[0].Kind != KindOther {
		t.Fatalf("control: kind %s before the config is read, want other", r.Findings[0].Kind)
	}
	r.ApplyServers([]Server{{Name: "docs", Command: "/srv/tools/docs.py", Args: []string{"--root", "/srv/docs"}, File: "/h/.mcp.json", UID: 1000}})
	if f := r.Findings[0]; f.Kind != KindMCP || !strings.Contains(strings.Join(f.Evidence, "\n"), `MCP server "docs" of /h/.mcp.json`) {
		t.Errorf("kind %s evidence %v: want the script server docs", f.Kind, f.Evidence)
	}
}

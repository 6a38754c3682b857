package scan

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Kind says what a tree is, from the ledger when a run names it, else from
// fingerprints of its root: the ledger's kinds.
type Kind = ledger.Kind

// The kinds of tree (docs/policy.md, "kind").
const (
	KindPTY   = ledger.KindPTY
	KindACP   = ledger.KindACP
	KindMCP   = ledger.KindMCP
	KindExec  = ledger.KindExec
	KindOther = ledger.KindOther
)

// Kinds lists every kind, for validation.
var Kinds = ledger.Kinds

var (
	// acpCommand matches the Agent Client Protocol's own packages: what
	// any client launches from the protocol's npm scope. A client's own
	// command lines — its CLI, its adapters and wrappers — are its Marks.
	acpCommand = MustPattern(`@agentclientprotocol/`)
	// mcpCommand matches MCP servers and their wrappers: the SDK's packages,
	// mcp-remote, and the naming convention *-mcp, mcp-server-*, *_mcp.
	mcpCommand = MustPattern(`(?i)modelcontextprotocol|mcp-remote|mcp[-_]server|` +
		`[-_@/]mcp([-_ /.@]|$)|(^|[/ ])mcp[-_]|fastmcp`)
	// ptyHost matches Windows' pseudo-console host, the PTY of a ConPTY
	// (what node-pty and Windows Terminal start): conhost.exe or
	// OpenConsole.exe run --headless. Its shell is attached to it as a
	// Linux shell is to its pty; ended, the host takes its console away.
	ptyHost = MustPattern(`(?i)(^|[\\/ "])(conhost|openconsole)\.exe"? (.* )?--headless( |$)`)
)

// Classify returns the kind of the tree rooted at p by fingerprint, from
// what the process is before how it is attached: a shell that leads a
// session on a pseudo-terminal is a PTY shell (its controlling terminal,
// or — once the master is gone and the kernel cleared it — the terminal
// its stdio still holds), whatever it runs; then the clients' command
// marks, ACP command lines, the protocol's and the clients', and MCP
// command lines; then any other session leader on a terminal (a program
// started there with setsid, keeping the terminal on its stdio: a
// `setsid -f node …-mcp` from a tmux shell is an MCP server, not a PTY
// shell); then the clients' environment marks. Checking ACP before MCP
// matters: agent CLIs carry --mcp-config.
func (c *Config) Classify(s *platform.Snapshot, p *platform.Process) Kind {
	onTerminal := s.PTYShell(p)
	if onTerminal && isShell(s.Cmdline(p)) {
		return KindPTY
	}
	cmd := s.CommandLine(p)
	if s.NoReparenting && ptyHost.MatchString(cmd) {
		return KindPTY // a Windows table's: no other system has the host
	}
	for _, m := range c.Marks.Commands {
		if m.Cmdline.MatchString(cmd) {
			return m.Kind
		}
	}
	switch {
	case acpCommand.MatchString(cmd):
		return KindACP
	case mcpCommand.MatchString(cmd):
		return KindMCP
	case onTerminal:
		return KindPTY
	}
	for _, m := range c.Marks.Env {
		if v, ok := s.Getenv(p, m.Env); ok && v == m.Value {
			return m.Kind
		}
	}
	return KindOther
}

// shells are the command interpreters a terminal runs; on Windows also
// PowerShell, cmd and Git Bash, named without ".exe".
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "fish": true,
	"ksh": true, "mksh": true, "tcsh": true, "csh": true, "ash": true, "busybox": true,
	"powershell": true, "pwsh": true, "cmd": true}

// isShell reports whether argv runs a shell: its program's base name, a
// login shell's leading "-" aside ("-bash"), a Windows program's
// directory (after a backslash) and ".exe" too, in any case. Node
// programs that set their title leave one string: its first word is the
// program.
func isShell(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := strings.TrimPrefix(argv[0], "-")
	if i := strings.LastIndexByte(name, '\\'); i >= 0 {
		name = name[i+1:] // C:\Program Files\PowerShell\7\pwsh.exe
	}
	name, _, _ = strings.Cut(name, " ")
	name = path.Base(name)
	if base, ok := strings.CutSuffix(strings.ToLower(name), ".exe"); ok {
		name = base
	}
	return shells[name]
}

// ApplyServers gives kind mcp to each finding of kind other whose root is
// one of the MCP servers a client's config declares: clients spawn those
// with a scrubbed environment, so neither a marker nor, for a server with
// an unusual name, the fingerprints above say what they are. Only the kind
// changes, never the reasons: a finding is a finding on its own evidence —
// except for a config whose client runs its servers in its own process
// group and marks them with nothing (Server.GroupOwner): a still untracked
// root of any kind that is one of them is that client's, and the group
// says whether the client is gone (groupOwned).
func (r *Result) ApplyServers(servers []Server) {
	r.servers = newServerIndex(servers)
	if len(servers) == 0 {
		return
	}
	s := r.Tree.Snap
	for i := range r.Findings {
		f := &r.Findings[i]
		other := f.Kind == KindOther
		if !other && !f.Has(Untracked) {
			continue
		}
		srv := r.servers.match(Words(s.Cmdline(f.Root)), func(m *Server) bool {
			// A root of a known kind is asked only of a config whose
			// client owns its servers' group: its owner is the news.
			return (other || m.GroupOwner != "") && r.speaks(m.UID, f.Root, "MCP server "+m.Name+" of "+m.File)
		})
		if srv == nil {
			continue
		}
		if other {
			f.Kind = KindMCP
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("its command line is MCP server %q of %s", srv.Name, srv.File))
		if srv.GroupOwner != "" && f.Has(Untracked) {
			r.groupOwned(f, srv)
		}
	}
}

// groupOwned attributes f, a server of srv's config, to the client that
// runs that config's servers in its own process group (Server.GroupOwner),
// and proves the client gone by the group, as ApplyLeaders does: the
// group's leader pid is held while the root lives, so it gone is proof;
// it is the client only when the group is not its session's (a client
// run from a shell leads a job's group in the shell's session). The
// config is the root's user's own (ApplyServers asked), and so is the
// word.
func (r *Result) groupOwned(f *Finding, srv *Server) {
	s := r.Tree.Snap
	f.Owner = srv.GroupOwner
	f.claimed()
	f.spoken(srv.UID)
	pg := f.Root.PGID
	what := fmt.Sprintf("%s runs %s's servers in its own process group", srv.GroupOwner, srv.File)
	if pg <= 1 || pg == f.Root.PID {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s, but this one leads its own group, so which %s is not known", what, srv.GroupOwner))
		return
	}
	f.OwnerPID = pg
	q := s.Get(pg)
	switch {
	case q != nil && !q.Zombie():
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: process group %d's leader pid %d (%s) is alive", what, pg, pg, clip(s.CommandLine(q), 80)))
	case f.Root.SID == pg:
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: process group %d's leader is gone, but the group is its session's (made by setsid), so its leader is not shown to be %s", what, pg, srv.GroupOwner))
	default:
		f.Reasons = append(f.Reasons, OwnerDead)
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: process group %d's leader, %s pid %d, is gone (the kernel gives no process a pid its group still holds)", what, pg, srv.GroupOwner, pg))
	}
}

// serverIndex is the declared servers by the names a process of each can
// show first (keys): a command line is compared with the servers its
// first word could be, not with every client's every server (at 1,000
// findings and 20 users' configs, 320,000 compares).
type serverIndex struct {
	servers []Server
	byCmd   map[string][]int
}

func newServerIndex(servers []Server) *serverIndex {
	x := &serverIndex{servers: servers, byCmd: map[string][]int{}}
	for k := range servers {
		for _, key := range servers[k].keys() {
			x.byCmd[key] = append(x.byCmd[key], k)
		}
	}
	return x
}

// match is the first server the command line words is that ok accepts
// (asked only of a server it is), or nil.
func (x *serverIndex) match(words []string, ok func(*Server) bool) *Server {
	if x == nil || len(words) == 0 {
		return nil
	}
	first := path.Base(words[0])
	cands := x.byCmd[first]
	if first == "npm" { // npx once running (MatchesWords)
		cands = append(slices.Clip(cands), x.byCmd["npx"]...)
	}
	// A script run through its interpreter: the script's name, after at
	// most two of the interpreter's flags.
	for i := 1; i < len(words) && i <= 3; i++ {
		if !strings.HasPrefix(words[i], "-") {
			if b := path.Base(words[i]); b != first {
				cands = append(slices.Clip(cands), x.byCmd[b]...)
			}
			break
		}
	}
	for _, k := range cands {
		if m := &x.servers[k]; m.MatchesWords(words) && ok(m) {
			return m
		}
	}
	return nil
}

// keys are the names a process of this server can show first or as the
// script its interpreter runs (ApplyServers' index): the command's base
// name, and for uvx and pipx the tool's.
func (m *Server) keys() []string {
	cmd := path.Base(m.Command)
	out := []string{cmd}
	if (cmd == "uvx" || cmd == "pipx") && len(m.Args) > 0 {
		tool := Words(m.Args)
		if cmd == "pipx" && len(tool) > 0 && tool[0] == "run" {
			tool = tool[1:]
		}
		if len(tool) > 0 {
			out = append(out, strings.SplitN(tool[0], "@", 2)[0])
		}
	}
	return out
}

// Matches reports whether a process's argv is this server: the command
// (compared by base name, as clients resolve it on PATH) followed by
// exactly the configured arguments. npx shows as "npm exec" once running
// (npm's npx entry point rewrites its argv and the process title), without
// its own flags such as -y; that form is compared with the flags left out
// on both sides. Node programs that set their title leave one space-joined
// string in /proc/PID/cmdline, so the comparison is of space-joined words.
func (m *Server) Matches(argv []string) bool { return m.MatchesWords(Words(argv)) }

// Words are a command line's space-joined words, as MatchesWords compares
// them: cut once, a command line can be compared with many servers.
func Words(argv []string) []string { return strings.Fields(strings.Join(argv, " ")) }

// MatchesWords is Matches for a command line already cut by Words. The
// server's own words are cut once and kept.
func (m *Server) MatchesWords(words []string) bool {
	if len(words) == 0 {
		return false
	}
	if !m.cut {
		m.want, m.cut = Words(m.Args), true
	}
	want := m.want
	cmd := path.Base(m.Command)
	if len(want) == 0 && genericCommands[cmd] {
		return false // a bare interpreter says nothing about which program runs
	}
	if path.Base(words[0]) == cmd && slices.Equal(words[1:], want) {
		return true
	}
	if cmd == "npx" && len(words) >= 3 && path.Base(words[0]) == "npm" && words[1] == "exec" {
		got := withoutFlags(words[2:])
		return len(got) > 0 && slices.Equal(got, withoutFlags(want))
	}
	return m.throughInterpreter(words, cmd, want)
}

// throughInterpreter matches the forms in which the kernel, or a launcher,
// runs a configured command through another program, so that the process
// shows that program first:
//
//   - a script (#!/usr/bin/python3, #!/usr/bin/env node, #!/usr/bin/env -S
//     node --flag): the kernel runs the interpreter with the script's path
//     as it was exec'd — the configured path, or the full path PATH gave a
//     bare name, or the symlink an npm or pipx global bin is — then the
//     arguments: "python3 /srv/server.py --port 1";
//   - uvx and pipx run a tool's console script through the tool's own
//     interpreter: "uvx mcp-server-fetch" runs as "python
//     /…/bin/mcp-server-fetch".
//
// At most two interpreter flags may stand before the script (-u, -S …);
// what follows it must be exactly the configured arguments.
func (m *Server) throughInterpreter(words []string, cmd string, want []string) bool {
	script, rest := m.Command, want
	if (cmd == "uvx" || cmd == "pipx") && len(want) > 0 {
		// "pipx run TOOL", "uvx TOOL", "uvx TOOL@1.2": the tool's script.
		tool := want
		if cmd == "pipx" && tool[0] == "run" {
			tool = tool[1:]
		}
		if len(tool) == 0 || strings.HasPrefix(tool[0], "-") {
			return false
		}
		script, rest = strings.SplitN(tool[0], "@", 2)[0], tool[1:]
	} else if genericCommands[cmd] {
		return false // an interpreter configured by name: the first form already compared it
	}
	for i := 1; i < len(words) && i <= 3; i++ {
		if sameCommand(words[i], script) {
			return slices.Equal(words[i+1:], rest)
		}
		if !strings.HasPrefix(words[i], "-") || codeFlags[words[i]] {
			return false // another program, or code given inline
		}
	}
	return false
}

// codeFlags are interpreter flags whose next word is code or a module,
// not a script: "python3 -c SCRIPT" runs no script.
var codeFlags = map[string]bool{"-c": true, "-m": true, "-e": true, "-p": true, "--eval": true, "--print": true, "-r": true, "--require": true}

// sameCommand reports whether a word of a command line is the configured
// command: the same path, or — for a command configured by bare name,
// which the client found on PATH — any path of that name.
func sameCommand(word, configured string) bool {
	if word == configured {
		return true
	}
	return !strings.Contains(configured, "/") && path.Base(word) == configured
}

// genericCommands are launchers and interpreters: without arguments they
// identify no server.
var genericCommands = map[string]bool{
	"node": true, "nodejs": true, "npx": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "bunx": true,
	"deno": true, "python": true, "python3": true, "uv": true, "uvx": true, "pipx": true, "sh": true, "bash": true,
	"docker": true, "podman": true, "ssh": true, "java": true, "ruby": true, "go": true,
}

func withoutFlags(words []string) []string {
	var out []string
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			out = append(out, w)
		}
	}
	return out
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/openclaw"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// ledgerSet is what a run read from ledgers and OpenClaw state.
type ledgerSet struct {
	ledgers []*ledger.Ledger
	// problems are files that exist but could not be read, other than those
	// named on the command line (which fail the run instead), each with
	// the trees it could speak for.
	problems []problem
	// servers are the stdio MCP servers OpenClaw configs name; warnings are
	// configs that could not be read (they only classify, so doubt about
	// them refuses nothing).
	servers  []openclaw.MCPServer
	warnings []string
	// gateways are the OpenClaw gateways the state dirs' locks name, and
	// states what each state dir says for advice.
	gateways []openclaw.Gateway
	states   []scan.OpenClawState
}

// loadLedgers reads the ledgers named on the command line (an invalid one
// is an error: exit 78), those the policy's [[owner]] entries name, and —
// when the snapshot is this machine's live table — the OpenClaw state dirs
// it discovers: OPENCLAW_STATE_DIR, the home directories' ~/.openclaw*
// (every user's when root), and the OPENCLAW_STATE_DIR of live gateways.
func loadLedgers(named []string, pol *policy.Policy, snap *platform.Snapshot, liveOwners []*platform.Process, discover bool) (*ledgerSet, error) {
	set := &ledgerSet{}
	boot := openclaw.Boot{ID: snap.BootID, Time: snap.Taken.Add(-snap.Uptime)}
	seen := map[string]bool{}
	for _, path := range named {
		path = filepath.Clean(path)
		seen[path] = true
		ls, st, errs := readLedgerPath(path, boot)
		if len(errs) > 0 {
			return nil, errs[0]
		}
		set.ledgers = append(set.ledgers, ls...)
		if st != nil {
			set.addServers(path)
			set.addGateway(path, st, snap)
		}
	}
	for _, o := range pol.Owners {
		for _, path := range o.Ledger {
			path = expandHome(path)
			if seen[path] {
				continue
			}
			seen[path] = true
			if _, err := os.Stat(path); os.IsNotExist(err) {
				continue // the owner has not written one (yet)
			}
			ls, _, errs := readLedgerPath(path, boot)
			// A supervisor's own ledger file may name children of any user
			// it runs as: doubt about it holds back every tree.
			set.add(ls, errs, policy.Doubt{All: true})
		}
	}
	if !discover || snap.Self == 0 {
		return set, nil // a fixture: the machine's own state says nothing about it
	}
	explicit := []string{os.Getenv("OPENCLAW_STATE_DIR"), os.Getenv("CLAWDBOT_STATE_DIR")}
	for _, p := range liveOwners {
		if dir, ok := snap.Getenv(p, openclaw.EnvStateDir); ok {
			explicit = append(explicit, dir)
		}
	}
	// And every gateway by its process title: the live owners the scan met
	// are those of the trees it looked at, and a gateway whose trees are
	// all in order (the leaks under a live gateway) is not among them.
	for i := range snap.Procs {
		if p := &snap.Procs[i]; openclaw.IsGatewayComm(p.Comm) && !p.Zombie() {
			if dir, ok := snap.Getenv(p, openclaw.EnvStateDir); ok {
				explicit = append(explicit, dir)
			}
		}
	}
	for _, dir := range openclaw.StateDirs(homeDirs(), explicit) {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		st, errs := openclaw.ReadState(dir, boot)
		set.add(nil, errs, stateDoubt(dir))
		if st == nil {
			continue
		}
		set.ledgers = append(set.ledgers, st.Ledgers...)
		set.addServers(dir)
		set.addGateway(dir, st, snap)
	}
	return set, nil
}

// addServers reads the stdio MCP servers of an OpenClaw state dir's config.
func (s *ledgerSet) addServers(dir string) {
	servers, err := openclaw.ReadMCPServers(dir)
	if err != nil {
		s.warnings = append(s.warnings, err.Error()+" (its MCP servers are recognised by fingerprint only)")
	}
	s.servers = append(s.servers, servers...)
}

// problem is state that could not be read, and the doubt it casts.
type problem struct {
	msg   string
	doubt policy.Doubt
}

// addGateway takes what the state dir says of its gateway: who the newest
// lock names, and the task and session stores as that gateway's ledger
// (exec rows tied to the live processes that run them), and the codex
// app-server's MCP servers tied to its threads.
func (s *ledgerSet) addGateway(dir string, state *openclaw.State, snap *platform.Snapshot) {
	owner := ledger.Owner{Name: openclaw.OwnerName} // unknown: proves nothing either way
	st := scan.OpenClawState{Dir: dir, LiveSessions: -1}
	if gw := state.Gateway; gw != nil {
		s.gateways = append(s.gateways, *gw)
		owner = gw.Owner
		st.Gateway = gw
	}
	config := filepath.Join(dir, "openclaw.json")
	for _, srv := range s.servers {
		if srv.File == config {
			st.Servers = append(st.Servers, srv)
		}
	}
	if tasks := state.Tasks; tasks != nil {
		s.ledgers = append(s.ledgers, tasks.Ledger(owner, snap))
		if tasks.Sessions != nil {
			st.LiveSessions = len(tasks.Sessions.Live)
		}
		// The codex app-server's MCP servers, tied to its threads: its
		// ledger, and what the advice counts.
		st.Codex = tasks.CodexAppServers(snap, st.Servers)
		for _, as := range st.Codex {
			s.ledgers = append(s.ledgers, openclaw.CodexLedger(tasks.Source, as,
				ledger.Owner{Name: openclaw.CodexOwnerName, PID: as.PID, Start: as.Start}))
		}
		if tasks.BadCodexRows > 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("%s: %d codex plugin rows did not parse (skipped: their threads are not shown ended)", tasks.Source, tasks.BadCodexRows))
		}
	}
	s.states = append(s.states, st)
}

func (s *ledgerSet) add(ls []*ledger.Ledger, errs []error, d policy.Doubt) {
	s.ledgers = append(s.ledgers, ls...)
	for _, err := range errs {
		s.problems = append(s.problems, problem{err.Error(), d})
	}
}

// stateDoubt is the doubt an unreadable OpenClaw state dir casts: on the
// trees of the user it belongs to, and on trees whose root names it as
// OPENCLAW_STATE_DIR. A dir whose owner is unknown casts doubt on all.
func stateDoubt(dir string) policy.Doubt {
	fi, err := os.Stat(dir)
	if err != nil {
		return policy.Doubt{All: true}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return policy.Doubt{All: true}
	}
	return policy.Doubt{UID: st.Uid, Dir: filepath.Clean(dir)}
}

// readLedgerPath reads a v1 ledger file, or an OpenClaw state dir (whose
// whole state is returned too).
func readLedgerPath(path string, boot openclaw.Boot) ([]*ledger.Ledger, *openclaw.State, []error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, []error{&ledger.Error{File: path, Msg: "cannot be opened: " + errors.Unwrap(err).Error(), Err: err}}
	}
	if fi.IsDir() {
		if !openclaw.IsStateDir(path) {
			return nil, nil, []error{&ledger.Error{File: path, Msg: "a directory that is not an OpenClaw state dir: name a ledger file"}}
		}
		st, errs := openclaw.ReadState(path, boot)
		if st == nil {
			return nil, nil, errs
		}
		return st.Ledgers, st, errs
	}
	l, err := ledger.ReadFile(path)
	if err != nil {
		return nil, nil, []error{err}
	}
	return []*ledger.Ledger{l}, nil, nil
}

// expandHome expands a leading ~/ to the home directory.
func expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return filepath.Clean(path)
}

// homeDirs are the home directories to look for OpenClaw state in, with
// their accounts: the reaper's own, and as root every account's in
// /etc/passwd (StateDirs lists only those their account owns).
func homeDirs() []openclaw.Home {
	var homes []openclaw.Home
	if home, err := os.UserHomeDir(); err == nil {
		homes = append(homes, openclaw.Home{Dir: home, UID: int(euid())})
	}
	if euid() != 0 {
		return homes
	}
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return homes
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// name:password:uid:gid:gecos:home:shell (passwd(5))
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 7 || !filepath.IsAbs(fields[5]) || fields[5] == "/" {
			continue
		}
		uid, err := strconv.Atoi(fields[2])
		if err != nil {
			continue
		}
		homes = append(homes, openclaw.Home{Dir: fields[5], UID: uid})
	}
	return homes
}

// doubtsFrom groups the problems into the plan's doubts: one per user or
// state dir, saying how many files could not be read and naming the first.
func doubtsFrom(problems []problem) []policy.Doubt {
	type key struct {
		all bool
		uid uint32
		dir string
	}
	var order []key
	count := map[key]int{}
	first := map[key]string{}
	for _, p := range problems {
		k := key{p.doubt.All, p.doubt.UID, p.doubt.Dir}
		if count[k] == 0 {
			order = append(order, k)
			first[k] = p.msg
		}
		count[k]++
	}
	var out []policy.Doubt
	for _, k := range order {
		whose := "ledger"
		if k.dir != "" {
			whose = fmt.Sprintf("OpenClaw state (uid %d)", k.uid)
		}
		reason := fmt.Sprintf("%s could not be read (%s): a run it owns could be in this tree", whose, first[k])
		if n := count[k]; n > 1 {
			reason = fmt.Sprintf("%s could not be read (%d files; first %s): a run it owns could be in this tree", whose, n, first[k])
		}
		out = append(out, policy.Doubt{Reason: reason, All: k.all, UID: k.uid, Dir: k.dir})
	}
	return out
}

// messages are the problems' texts, for the report's errors.
func messages(problems []problem) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = p.msg
	}
	return out
}

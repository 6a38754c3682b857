package view

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// clientName is a client as people call it, and how it registers an MCP
// server by URL (client.Info.RemoteServer).
type clientName struct{ name, title, remote string }

// clientNames maps every owner name and process title a client's
// evidence carries to the client.
func clientNames(set client.Set) map[string]clientName {
	out := map[string]clientName{}
	for _, c := range set.All() {
		info := c.Info()
		cn := clientName{info.Name, info.Title, info.RemoteServer}
		out["info:"+info.Name] = cn
		for _, o := range info.Owners {
			out[o] = cn
		}
		for _, comm := range info.Comms {
			out["comm:"+comm] = cn
		}
	}
	return out
}

// client is the client an owner name is of (the owner name itself when
// no client claims it: a policy's [[owner]]).
func (b *psBuild) client(owner string) clientName {
	if c, ok := b.clients[owner]; ok {
		return c
	}
	return clientName{owner, owner, ""}
}

// mine reports whether p is in the view's scope: every process as root,
// else the reaper's own user's.
func (b *psBuild) mine(p *platform.Process) bool {
	return b.uid == 0 || b.s.UID(p) == b.uid
}

// findings indexes the findings a rule of the policy takes (the plan's
// items) by root: the trees no rule names are not shown, as in scan.
func (b *psBuild) findings() {
	b.rootOf, b.held = map[int]int{}, map[int]bool{}
	for i, it := range b.p.Plan.Items {
		b.rootOf[it.Finding.Root.PID] = i
	}
}

// records makes a session of every record's live process (one per pid:
// the first record with a session id wins), and an ended one of each
// record whose process is gone.
func (b *psBuild) records() {
	ev := &b.p.Evidence
	add := func(rec scan.Session) {
		o := rec.Owner
		if o.PID <= 0 {
			return
		}
		gone := o.Gone != ""
		if !gone {
			gone, _ = scan.OwnerGone(b.s, scan.RecordedBy(rec.Speaker, o.PID, o.Start))
		}
		cn := b.client(o.Name)
		s := audit.PSSession{Client: cn.name, Title: cn.title, Version: audit.UserText(rec.Version, audit.MaxName), PID: o.PID, UID: -1, SessionID: audit.UserText(rec.ID, audit.MaxName), Dir: audit.UserText(rec.Dir, audit.MaxCmdline), Kind: rec.Kind,
			Record: rec.Proof, Speaker: int64(rec.Speaker), Processes: []audit.PSProcess{}}
		if !rec.Started.IsZero() {
			s.StartedAt = rec.Started.UTC().Format(time.RFC3339)
		}
		if gone {
			if b.uid != 0 && rec.Speaker != b.uid {
				return
			}
			s.State = "ended"
			if !rec.Started.IsZero() {
				s.AgeSeconds = max(int64(time.Since(rec.Started).Seconds()), 0)
			}
			key := s.Client + "@" + strconv.Itoa(o.PID)
			if k, ok := b.endedAt[key]; ok {
				if e := &b.ended[k]; e.SessionID == "" && rec.ID != "" {
					e.SessionID, e.Dir, e.Kind, e.Record, e.Version, e.StartedAt, e.AgeSeconds = rec.ID, rec.Dir, rec.Kind, rec.Proof, s.Version, s.StartedAt, s.AgeSeconds
				}
				return
			}
			b.endedAt[key] = len(b.ended)
			b.ended = append(b.ended, s)
			return
		}
		proc := b.s.Get(o.PID)
		if proc == nil {
			return // started after the table was read: the next pass's
		}
		if _, orphan := b.rootOf[o.PID]; orphan || !b.mine(proc) {
			return // a client judged orphaned is among the orphans
		}
		if k, ok := b.anchor[o.PID]; ok {
			if e := &b.sessions[k]; e.SessionID == "" && rec.ID != "" {
				e.SessionID, e.Dir, e.Kind, e.Record, e.Version, e.StartedAt = rec.ID, rec.Dir, rec.Kind, rec.Proof, s.Version, s.StartedAt
			}
			return
		}
		b.anchor[o.PID] = len(b.sessions)
		b.sessions = append(b.sessions, s)
	}
	for _, rec := range ev.Sessions {
		add(rec)
	}
	for _, l := range ev.Ledgers {
		add(scan.Session{Owner: l.Owner, Proof: "the ledger " + l.Source, Speaker: l.Speaker})
	}
	for _, t := range ev.Ties {
		add(scan.Session{Owner: t.Owner, Proof: t.Proof, Speaker: t.Speaker})
	}
}

// byTitle makes a session of each process titled as a client's own whose
// parent is not (a client's helpers carry its title too), that no record
// named.
func (b *psBuild) byTitle() {
	s := b.s
	for i := range s.Procs {
		p := &s.Procs[i]
		cn, ok := b.titled(p)
		if !ok || p.Zombie() || p.KernelThread() {
			continue
		}
		if _, named := b.anchor[p.PID]; named {
			continue
		}
		if pp := s.Get(p.PPID); pp != nil {
			if pc, ok := b.titled(pp); ok && pc == cn {
				continue // a client's helper under the client
			}
		}
		if _, orphan := b.rootOf[p.PID]; orphan || !b.mine(p) {
			continue
		}
		b.anchor[p.PID] = len(b.sessions)
		b.sessions = append(b.sessions, audit.PSSession{Client: cn.name, Title: cn.title, PID: p.PID, UID: -1, Speaker: -1, Processes: []audit.PSProcess{}})
	}
}

// titled is the client p is titled as (scan.ClientMark.Own), if any.
func (b *psBuild) titled(p *platform.Process) (clientName, bool) {
	if cn, ok := b.clients["comm:"+p.Comm]; ok {
		return cn, true
	}
	for i := range b.native {
		if n := &b.native[i]; n.mark.Own(b.s, p) {
			return b.clients["info:"+n.name], true
		}
	}
	return clientName{}, false
}

// nativeClient is a client whose own processes only their command line
// tells (Info.VersionDirs, Info.Script): its mark, made once a view.
type nativeClient struct {
	mark scan.ClientMark
	name string
}

// versioned finds a version in a client's command: a path component or
// title of the form 1.2.3 (the native Claude Code binary is
// …/versions/2.1.331, and titles itself so).
var versioned = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.]+)?$`) })

func (b *psBuild) version(p *platform.Process) string {
	if versioned().MatchString(p.Comm) {
		return p.Comm
	}
	argv := b.s.Cmdline(p)
	if len(argv) == 0 {
		return ""
	}
	for _, part := range strings.Split(argv[0], "/") {
		if versioned().MatchString(part) {
			return part
		}
	}
	return ""
}

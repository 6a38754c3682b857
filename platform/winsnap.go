package platform

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// WinProc is one process of a Windows table, as one
// NtQuerySystemInformation(SystemProcessInformation) read gives it, and as
// a recorded Windows table (a fixture) spells it.
type WinProc struct {
	PID, PPID int
	// Created is the process's creation time: with the pid, its identity
	// (an open handle pins the pid; the time tells a reused one).
	Created time.Time
	// Image is the image's file name ("node.exe", "cmd.exe").
	Image      string
	Session    uint32
	WorkingSet uint64
	Threads    int32
	// UID stands for the owner: the relative id (RID) of its token's user
	// SID, NoUID where the token could not be read.
	UID uint32
	// Cmdline and Env are the details a fixture records (the live table
	// reads them from the process's PEB, for the candidates alone).
	Cmdline string
	Env     []string
}

// ParentGone reports whether p's recorded parent has exited, on a system
// that keeps the dead parent's pid as the child's ppid (Windows): the
// orphan's sign there, where Linux and macOS reparent to an init.
func (p *Process) ParentGone() bool { return p.parentGone }

// WindowsSnapshot makes the table of a Windows machine from its processes
// (the live read's, or a recorded table's): start times are wall-clock
// (microseconds since the epoch, as macOS's), and a process whose
// recorded parent is gone or younger than itself is marked (ParentGone) —
// its ppid stays what Windows recorded, for the words. details reads a
// candidate's command line and environment; nil: each WinProc's own. boot
// is when the system started (the records of an earlier boot name no
// process of this one); zero: the oldest creation time stands for it.
func WindowsSnapshot(procs []WinProc, taken, boot time.Time, details func(pid int) (cmdline string, env []string, err error)) *Snapshot {
	out := make([]Process, 0, len(procs))
	recorded := map[int]*WinProc{}
	var oldest time.Time
	for i := range procs {
		w := &procs[i]
		if w.PID == 0 {
			continue // the System Idle Process: no process at all
		}
		recorded[w.PID] = w
		if !w.Created.IsZero() && (oldest.IsZero() || w.Created.Before(oldest)) {
			oldest = w.Created
		}
		out = append(out, Process{PID: w.PID, PPID: w.PPID, Comm: w.Image, StartTicks: uint64(max(w.Created.UnixMicro(), 0)),
			RSS: w.WorkingSet, Threads: w.Threads, UID: w.UID, State: 'R', TPGID: -1})
	}
	if boot.IsZero() {
		boot = oldest
	}
	for i := range out {
		p := &out[i]
		if p.PPID == 0 || p.PPID == p.PID {
			continue // none recorded (System; a process started from outside wine)
		}
		if parent := recorded[p.PPID]; parent == nil || parent.Created.UnixMicro() > int64(p.StartTicks) {
			p.parentGone = true
		}
	}
	if details == nil {
		details = func(pid int) (string, []string, error) {
			w := recorded[pid]
			if w == nil {
				return "", nil, ErrNoArgs
			}
			return w.Cmdline, w.Env, nil
		}
	}
	s := &Snapshot{Procs: out, ClockTicks: 1e6, Taken: taken, Uptime: max(taken.Sub(boot), 0), wallStart: true, NoReparenting: true,
		reader: &winReader{details: details}}
	sortProcs(s.Procs)
	return s
}

// winReader hands a Windows process's command line and environment on in
// /proc's NUL-separated form: the command line split as Windows' own
// CommandLineToArgvW splits it (SplitCommandLine). Windows has no
// cgroups, fd links or status files to read this way.
//
// One read of a PEB gives both: the last pid's are kept, so that a
// candidate's command line and environment cost one read, not two.
type winReader struct {
	details func(pid int) (string, []string, error)
	// owners reads a process's owner (the live table's, lazily: a handle
	// and its token each); nil where the table gives them (a fixture).
	owners func(pid int) uint32
	last   struct {
		pid     int
		cmdline string
		env     []string
		err     error
	}
}

func (r *winReader) fork() detailReader { return &winReader{details: r.details, owners: r.owners} }

// owner is the RID of the user of pid's token (ownerReader).
func (r *winReader) owner(pid int) (uint32, error) {
	if r.owners == nil {
		return NoUID, errors.ErrUnsupported
	}
	return r.owners(pid), nil
}

func (r *winReader) read(pid int, what detail) ([]byte, error) {
	if what != detailCmdline && what != detailEnviron {
		return nil, nil
	}
	if r.last.pid != pid || pid == 0 {
		r.last.pid = pid
		r.last.cmdline, r.last.env, r.last.err = r.details(pid)
	}
	cmdline, env, err := r.last.cmdline, r.last.env, r.last.err
	if err != nil {
		return nil, err
	}
	var parts []string
	if what == detailCmdline {
		parts = SplitCommandLine(cmdline)
	} else {
		parts = env
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return []byte(strings.Join(parts, "\x00") + "\x00"), nil
}

// SplitCommandLine splits a Windows command line into its arguments by
// the rules of CommandLineToArgvW and the C runtime (the first argument:
// up to the first space, or quoted; then backslashes escape only a quote,
// 2n backslashes and a quote are n and a quote's toggle, 2n+1 and a quote
// are n and a literal quote; "" inside quotes is a literal quote).
func SplitCommandLine(s string) []string {
	var args []string
	var b strings.Builder
	// The program's name: no escapes, quotes only group.
	i, quoted := 0, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			quoted = !quoted
			continue
		}
		if !quoted && (c == ' ' || c == '\t') {
			break
		}
		b.WriteByte(c)
	}
	if i > 0 || len(s) > 0 {
		args = append(args, b.String())
	}
	b.Reset()
	in, started := false, false
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				b.WriteString(strings.Repeat("\\", n/2))
				if n%2 == 1 {
					b.WriteByte('"')
					i++
				}
			} else {
				b.WriteString(strings.Repeat("\\", n))
			}
			started = true
			continue
		case c == '"':
			if in && i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i += 2
				continue
			}
			in, started = !in, true
		case !in && (c == ' ' || c == '\t'):
			if started {
				args = append(args, b.String())
				b.Reset()
				started = false
			}
		default:
			b.WriteByte(c)
			started = true
		}
		i++
	}
	if started {
		args = append(args, b.String())
	}
	return args
}

// windowsTable is a recorded Windows table (testdata/windows): what one
// read of the live table and its candidates' PEBs gave, at taken.
type windowsTable struct {
	About string    `json:"about"`
	Taken time.Time `json:"taken"`
	// Boot is when the machine started; absent, the oldest creation time.
	Boot  time.Time `json:"boot"`
	Procs []struct {
		PID     int       `json:"pid"`
		PPID    int       `json:"ppid"`
		Created time.Time `json:"created"`
		Image   string    `json:"image"`
		Session uint32    `json:"session"`
		WS      uint64    `json:"ws"`
		UID     *uint32   `json:"uid"`
		Cmdline string    `json:"cmdline"`
		Env     []string  `json:"env"`
	} `json:"procs"`
	// Containers are the MSIX containers of the table's user, as
	// Snapshot.Containers reads them.
	Containers []struct {
		Job       string    `json:"job"`
		Installed *[]string `json:"installed"`
		Members   []struct {
			PID     int    `json:"pid"`
			Package string `json:"package"`
			Image   string `json:"image"`
			Unread  bool   `json:"unread"`
		} `json:"members"`
	} `json:"containers"`
}

// ReadWindowsTable reads a recorded Windows table (testdata/windows/*.json)
// into the snapshot WindowsSnapshot makes of the live one: the Windows
// shape of a table, decided on any OS. A process without a uid is
// NoUID's, as one whose token could not be read.
func ReadWindowsTable(path string) (*Snapshot, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t windowsTable
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	procs := make([]WinProc, 0, len(t.Procs))
	for _, p := range t.Procs {
		uid := NoUID
		if p.UID != nil {
			uid = *p.UID
		}
		procs = append(procs, WinProc{PID: p.PID, PPID: p.PPID, Created: p.Created, Image: p.Image, Session: p.Session,
			WorkingSet: p.WS, Threads: 1, UID: uid, Cmdline: p.Cmdline, Env: p.Env})
	}
	s := WindowsSnapshot(procs, t.Taken, t.Boot, nil)
	var cs []Container
	for _, c := range t.Containers {
		pkg, _, ok := ContainerJob(c.Job)
		if !ok {
			return nil, fmt.Errorf("%s: container %q: not a Container_<package full name>-<SID> job", path, c.Job)
		}
		k := Container{Job: c.Job, Package: pkg}
		if c.Installed != nil {
			k.Installed = append([]string{}, *c.Installed...)
		}
		for _, m := range c.Members {
			k.Members = append(k.Members, ContainerMember{PID: m.PID, Package: m.Package, Image: m.Image, Unread: m.Unread})
		}
		cs = append(cs, k)
	}
	s.containers = func() ([]Container, error) { return cs, nil }
	return s, nil
}

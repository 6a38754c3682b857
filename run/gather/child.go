package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/child"
)

// ChildCommand is the hidden first argument that makes reaper's binary a
// reader child (ChildMain). It is not a command of the CLI.
const ChildCommand = "__read-state"

// protocol is the version of what a reader child prints. Parent and child
// are the same binary on Linux (/proc/self/exe); elsewhere an upgrade can
// put a newer binary in between, and a mismatch is that user's doubt.
const protocol = 2

// What a reader child prints is lines: a header, then two lines for each
// dir it was given, in order — what was asked (childState) and what the
// client's Read returned, as JSON:
//
//	{"protocol":2,"states":N}
//	{"client":"openclaw","dir":"/home/a/.openclaw"}
//	{...openclaw's read...}
//
// encoding/json writes a value with no newline in it (one inside a string
// is escaped), so a line is one value. The parent hands each read to its
// client's Decode as it is: every byte is decoded once, where one JSON
// document with the reads as RawMessages was validated and scanned twice
// more by each side (measured: 20 users' reads, ~0.7 MiB, cost the
// parent ~4 ms of CPU that way).
type childHeader struct {
	Protocol int `json:"protocol"`
	States   int `json:"states"`
}

// childState is what one dir's read was asked for: the client and dir
// (and as a child's argument, the records to read of a dir read by
// change).
type childState struct {
	Client  string   `json:"client"`
	Dir     string   `json:"dir"`
	Changed []string `json:"changed,omitempty"`
}

// childArg is how a dir is named to a reader child: CLIENT:DIR (a client's
// name holds no ':'), or for a dir read by change a JSON childState with
// the records' names (it starts with '{', which no client's name does).
func childArg(d Dir) string {
	if d.byChange {
		b, _ := json.Marshal(childState{Client: d.Client, Dir: d.Path, Changed: d.names()})
		return string(b)
	}
	return d.Client + ":" + d.Path
}

// parseChildArg is childArg's client, dir and, for a read by change, the
// records' names (nil: read whole).
func parseChildArg(arg string) (name, dir string, changed []string, err error) {
	if !strings.HasPrefix(arg, "{") {
		name, dir, _ = strings.Cut(arg, ":")
		return name, dir, nil, nil
	}
	var s childState
	if err := json.Unmarshal([]byte(arg), &s); err != nil {
		return "", "", nil, fmt.Errorf("a dir read by change: %w", err)
	}
	if s.Changed == nil {
		s.Changed = []string{}
	}
	return s.Client, s.Dir, s.Changed, nil
}

// The bounds of one reader child. Measured on this project's test machine:
// the binary needs about 80 MiB of RLIMIT_DATA to start (Go's heap arena
// map); a SQLite store that computes 200 MB values then fails inside its
// child with "out of memory" at the limit rather than growing the parent.
// A child reads every state dir of one user, all within its deadline.
var (
	childLimits = child.Limits{Data: 384 << 20, CPU: 10, Files: 64, Memory: 256 << 20}
	// ChildDeadline bounds one child's wall time (a variable for tests).
	ChildDeadline = 5 * time.Second
)

const (
	// maxChildOut bounds what the parent reads of a child's output: a
	// state dir's evidence is a few MiB at most (bounded rows and fields).
	maxChildOut = 32 << 20
	maxChildErr = 4 << 10
	// maxChildren is how many children read at once.
	maxChildren = 4
)

// ChildMain is the reader child: it sets its limits before anything else,
// then reads each state dir named after "--" (as CLIENT:DIR) with the Read
// of its client and prints what they returned as one JSON document. The
// clients are cs and those "--client SPEC" arguments before "--" declare
// (client.Declared), which declare makes again. It returns the exit
// status.
func ChildMain(args []string, stdout, stderr io.Writer, cs client.Set, declare func(spec []byte) (client.Client, error)) int {
	if err := child.LimitSelf(childLimits); err != nil {
		fmt.Fprintln(stderr, "reader:", err)
		return 70 // EX_SOFTWARE: it must not read unbounded
	}
	list := slices.Clone(cs.All()) // the declared ones are added to a copy
	for len(args) >= 2 && args[0] == "--client" {
		if declare == nil {
			fmt.Fprintln(stderr, "reader: this binary reads no declared client")
			return 64
		}
		c, err := declare([]byte(args[1]))
		if err != nil {
			fmt.Fprintln(stderr, "reader:", err)
			return 64
		}
		list, args = append(list, c), args[2:]
	}
	cs = client.NewSet(list...)
	if len(args) == 0 || args[0] != "--" {
		fmt.Fprintln(stderr, "reader: want [--client SPEC]... -- CLIENT:DIR...")
		return 64
	}
	// An Encoder writes each value with its newline straight from its
	// pooled buffer: no copy of a read is made to print it.
	enc := json.NewEncoder(stdout)
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "reader:", err)
		return code
	}
	if err := enc.Encode(childHeader{Protocol: protocol, States: len(args) - 1}); err != nil {
		return fail(74, err)
	}
	for _, arg := range args[1:] {
		name, dir, changed, err := parseChildArg(arg)
		if err != nil {
			return fail(64, err)
		}
		c := cs.ByName(name)
		if c == nil {
			return fail(64, fmt.Errorf("no client %q", name))
		}
		if err := enc.Encode(childState{Client: name, Dir: dir}); err != nil {
			return fail(74, err)
		}
		read := c.Read
		if changed != nil {
			read = func(dir string) []byte { return c.ReadChanged(dir, changed) }
		}
		// One line: encoding/json writes no newline inside a value.
		if _, err := stdout.Write(append(read(dir), '\n')); err != nil {
			return fail(74, err)
		}
	}
	return 0
}

// group is the state dirs of one uid, read by one child, and what the
// child said of them (states) or why it failed (err).
type group struct {
	uid   uint32
	gid   uint32
	dirs  []Dir
	reads [][]byte // each dir's read, as the child printed it
	err   error
}

// readResult is one dir's read: what its client's Read returned, as its
// Decode made it, or why it could not be read.
type readResult struct {
	dir  Dir
	read client.Decoded
	err  error
	skip string // why it was not read, by design (Pending.resolve)
	kept bool   // taken from a Cache, not read in this run
}

// readAll reads the dirs and returns each one's read, in order.
func readAll(ctx context.Context, dirs []Dir, rd *readers) []readResult {
	out := make([]readResult, len(dirs))
	ready := make(chan struct{})
	close(ready)
	startReads(ctx, dirs, rd, ready, nil, func(k int, r readResult) { out[k] = r }).Wait()
	return out
}

// readers is how a run reads users' state with the clients it knows: as
// root in reader children, within one budget for the run (budget), each
// as the account's group; otherwise in this process.
type readers struct {
	clients client.Set
	asRoot  bool
	accts   []account
	budget  *readBudget
}

// newReaders is how a run of this process, with clients cs, reads users'
// state (the accounts and the budget only as root).
func newReaders(ctx context.Context, cs client.Set) readers {
	rd := readers{clients: cs, asRoot: os.Geteuid() == 0}
	if rd.asRoot {
		rd.accts = accounts()
		rd.budget = newBudget(ctx, rd.accts)
	}
	return rd
}

// startReads hands each dir's read to fn (k is its index in dirs) once
// ready is closed, one call at a time. A dir resolve answers (nil: none)
// is not read; the others are read by readDirs.
func startReads(ctx context.Context, dirs []Dir, rd *readers, ready <-chan struct{}, resolve func(Dir) (readResult, bool), fn func(k int, r readResult)) *sync.WaitGroup {
	var wg sync.WaitGroup
	var mu sync.Mutex
	hand := func(k int, r readResult) {
		select {
		case <-ready:
		case <-ctx.Done():
			r = readResult{dir: r.dir, err: fmt.Errorf("not used: %w", context.Cause(ctx))}
			<-ready // fn needs what ready announces
		}
		mu.Lock()
		defer mu.Unlock()
		fn(k, r)
	}
	var toRead []Dir
	var at, known []int
	var answers []readResult
	for k, d := range dirs {
		if resolve != nil {
			if r, ok := resolve(d); ok {
				known, answers = append(known, k), append(answers, r)
				continue
			}
		}
		toRead, at = append(toRead, d), append(at, k)
	}
	if len(known) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range known {
				hand(k, answers[i])
			}
		}()
	}
	readDirs(ctx, toRead, rd, &wg, func(i int, r readResult) { hand(at[i], r) })
	return &wg
}

// readDirs reads the dirs — as root, one child per uid (at most
// maxChildren at once, each within ChildDeadline and ctx, in the turns and
// the shares of the run's budget) running as that uid, but root's own
// dirs that no other user can write to in this process; as anyone else,
// in this process (it reads only what its own user may) — and hands each
// dir's read to hand (i is its index in dirs), adding what it starts to
// wg. A child's output is read into one of maxChildren buffers used again
// and again and decoded at once; what it said waits for hand, and is let
// go of once hand has had it (hand keeps what it judges worth keeping).
func readDirs(ctx context.Context, dirs []Dir, rd *readers, wg *sync.WaitGroup, hand func(i int, r readResult)) {
	var here []int
	var groups []*group
	byUID := map[uint32]*group{}
	index := map[Dir]int{}
	for k, d := range dirs {
		if !rd.asRoot || ownPrivate(d) {
			here = append(here, k)
			continue
		}
		index[d] = k
		g := byUID[d.UID]
		if g == nil {
			g = &group{uid: d.UID, gid: gidOf(rd.accts, d.UID)}
			byUID[d.UID] = g
			groups = append(groups, g)
		}
		g.dirs = append(g.dirs, d)
	}
	if len(here) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range here {
				d := dirs[k]
				r := readResult{dir: d}
				switch c := rd.clients.ByName(d.Client); {
				case c == nil:
					r.err = fmt.Errorf("no client %q", d.Client)
				case d.byChange:
					r.read = c.Decode(c.ReadChanged(d.Path, d.names()), d.Path, d.UID)
				default:
					r.read = c.Decode(c.Read(d.Path), d.Path, d.UID)
				}
				hand(k, r)
			}
		}()
	}
	if len(groups) == 0 {
		return
	}
	slots := make(chan []byte, maxChildren)
	for range maxChildren {
		slots <- make([]byte, 0, 64<<10) // a user's state is tens of KiB: grown rarely
	}
	groups = rd.budget.order(groups)
	for _, g := range groups {
		g.err = rd.budget.admit(g.uid)
	}
	// The children start in the budget's order: a slot is taken before
	// each is started, so a user's many uids wait behind everyone's first.
	wg.Add(len(groups))
	go func() {
		for _, g := range groups {
			buf := <-slots
			go func() {
				defer wg.Done()
				buf = readGroup(ctx, g, rd, buf)
				// Each dir's read is decoded now, while the table is
				// scanned; only its judging waits for the table.
				reads := make([]readResult, len(g.dirs))
				for i, d := range g.dirs {
					reads[i] = readResult{dir: d, err: g.err}
					switch c := rd.clients.ByName(d.Client); {
					case g.err != nil:
					case c == nil:
						reads[i].err = fmt.Errorf("no client %q", d.Client)
					default:
						reads[i].read = c.Decode(g.reads[i], d.Path, g.uid)
					}
				}
				// The reads were slices of buf: it goes to the next child
				// only now, when they are decoded (Decode copies what it
				// keeps).
				g.reads = nil
				slots <- buf // the next child may run while this one waits for the table
				for i, d := range g.dirs {
					hand(index[d], reads[i])
				}
			}()
		}
	}()
}

// ownPrivate reports whether d is a root reaper's own state that no
// other user can have written, or put in its place: the dir and every dir
// above it root's (as listed, and still), no symbolic link, and none that
// its group or others may write to but a sticky one (/tmp: an entry there
// is its owner's to rename). Root reads it in its own process: a reader
// child bounds what a user wrote, and nobody else wrote here. A state dir
// root owns below a user's dir is not such: the user could rename it away
// and put their own in its place between this check and the read. What
// the dir holds of another owner, its client's Read does not take (it
// skips files not of the dir's owner).
func ownPrivate(d Dir) bool {
	if d.UID != 0 || os.Geteuid() != 0 || !filepath.IsAbs(d.Path) {
		return false
	}
	for p, first := filepath.Clean(d.Path), true; ; p, first = filepath.Dir(p), false {
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return false
		}
		if uid, ok := platform.FileUID(fi); !ok || uid != 0 {
			return false
		}
		writable := fi.Mode().Perm()&0o022 != 0
		if writable && (first || fi.Mode()&os.ModeSticky == 0) {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

// readGroup runs g's reader child, if its budget admitted it and it is
// still within its time, and splits what it printed into g.reads (or sets
// g.err); it returns buf, for the next child.
func readGroup(ctx context.Context, g *group, rd *readers, buf []byte) []byte {
	b := rd.budget
	if g.err != nil {
		return buf
	}
	deadline, err := b.start(g.uid)
	if err != nil {
		g.err = err
		return buf
	}
	out, err := readAs(ctx, g, rd, buf, deadline)
	if g.err = err; err == nil {
		g.reads, g.err = decode(g, out)
	}
	if out != nil {
		return out
	}
	return buf
}

// readAs runs one reader child as g's uid and returns what it printed,
// read into buf; the child is killed at deadline (its uid's, within the
// run's budget).
func readAs(ctx context.Context, g *group, rd *readers, buf []byte, deadline time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("not read: the run's deadline passed first")
	}
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, fmt.Errorf("not read within its time (%s a uid, within the run's %s for users' state)", ChildDeadline, maxReadTime))
	defer cancel()
	args := []string{ChildCommand}
	told := map[string]bool{}
	for _, d := range g.dirs {
		if c, ok := rd.clients.ByName(d.Client).(client.Declared); ok && !told[d.Client] {
			told[d.Client] = true
			args = append(args, "--client", string(c.Spec()))
		}
	}
	args = append(args, "--")
	for _, d := range g.dirs {
		args = append(args, childArg(d))
	}
	spec := child.ChildSpec{
		Args: args,
		// Nothing of the parent's environment but the temp dir, where
		// OpenClaw's older lock dirs are: no GODEBUG, GOTRACEBACK or
		// locale of the caller's reaches a child that reads hostile files.
		Env: []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C", "TMPDIR=" + os.TempDir(),
			// One thread, and no collection before the memory limit: a child
			// lives for milliseconds (measured: 6.8 ms of CPU a child with
			// the defaults, 4.9 ms with these).
			"GOMAXPROCS=1", "GOGC=off"},
		Drop:   g.uid != uint32(os.Geteuid()),
		UID:    g.uid,
		GID:    g.gid,
		MaxOut: maxChildOut, MaxErr: maxChildErr,
		Buf: buf,
	}
	out, err := child.RunChild(ctx, spec)
	if err != nil {
		return out, fmt.Errorf("reader as uid %d: %w", g.uid, err)
	}
	return out, nil
}

// decode splits what g's child printed into each dir's read, in order,
// checking that each names the client and dir asked for; the protocol
// number tells a reader of another version. Whose word each read is, is
// not taken from it: the caller knows whom it ran the child as. The reads
// are slices of out: out must not be used again until they are decoded.
func decode(g *group, out []byte) ([][]byte, error) {
	bad := func(why string) error {
		return fmt.Errorf("reader as uid %d: its output is not what a reader prints: %s", g.uid, why)
	}
	next := func() ([]byte, bool) {
		i := bytes.IndexByte(out, '\n')
		if i < 0 {
			return nil, false
		}
		l := out[:i]
		out = out[i+1:]
		return l, true
	}
	l, ok := next()
	var h childHeader
	if !ok || json.Unmarshal(l, &h) != nil {
		return nil, bad("no header")
	}
	switch {
	case h.Protocol != protocol:
		return nil, fmt.Errorf("reader as uid %d speaks protocol %d, this reaper %d (upgraded while running?)", g.uid, h.Protocol, protocol)
	case h.States != len(g.dirs):
		return nil, fmt.Errorf("reader as uid %d returned %d state dirs for %d", g.uid, h.States, len(g.dirs))
	}
	reads := make([][]byte, len(g.dirs))
	for k, d := range g.dirs {
		var s childState
		l, ok := next()
		if !ok || json.Unmarshal(l, &s) != nil {
			return nil, bad(fmt.Sprintf("state %d of %d is cut short", k+1, len(g.dirs)))
		}
		if s.Dir != d.Path || s.Client != d.Client {
			return nil, errors.New("reader returned another dir than it was asked for")
		}
		if reads[k], ok = next(); !ok {
			return nil, bad(fmt.Sprintf("state %d of %d is cut short", k+1, len(g.dirs)))
		}
	}
	if len(out) > 0 {
		return nil, bad("more than it was asked for")
	}
	return reads, nil
}

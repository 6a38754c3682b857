package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/child"
)

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
		if uid, ok := platform.FileUID(p, fi); !ok || uid != 0 {
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

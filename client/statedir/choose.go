package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/orphanreaper/reaper/platform"
)

// MaxListed bounds the names listed in one records dir to choose from:
// a user's hundred thousand stale files cost a bounded listing (names
// and an lstat each, in the user's own reader child), and what was not
// listed is said.
const MaxListed = 1 << 16

// Chosen is which of a records dir's files a reader reads, and what it
// left: the files named by a process that lives as their writer could
// (platform.RecordOwnerLive: the record's user's or root's, started before
// the record was written) are read first, then the others newest first,
// up to the bound.
type Chosen struct {
	// Names are the files to read, in that order.
	Names []string
	// LiveLeft counts the files past the bound that may be a live
	// process's record — named by a live pid, or by none (its pid is
	// inside, unread) — its owner's doubt.
	LiveLeft int
	// StaleLeft counts the oldest files named by dead pids past the
	// bound: each could only have proven an owner gone, so leaving them
	// costs a proof, never a live session's process — said, not doubt.
	StaleLeft int
	// Unlisted: the dir held more than MaxListed names; only some were
	// listed, and a live session's record may be among the others: its
	// owner's doubt.
	Unlisted bool
}

// Choose lists dir and chooses, of the names match takes, at most max to
// read (Chosen). pidOf gives the pid a file is named by (0: none, and
// such a file may be a live process's: it is read with the live ones): a
// client writes one record per process, named by its pid, and leaves the
// record of a process that was killed — so a dir of many is mostly dead
// processes' records, and reading by need (the live ones, then the
// newest) proves this pass's leftovers within a bound whatever the dir
// holds.
func Choose(dir string, match func(name string) bool, pidOf func(name string) int, max int) (Chosen, error) {
	names, err := platform.DirNames(dir, MaxListed)
	if err != nil {
		return Chosen{}, err
	}
	var c Chosen
	c.Unlisted = len(names) == MaxListed
	var matched []string
	for _, n := range names {
		if match(n) {
			matched = append(matched, n)
		}
	}
	if len(matched) <= max {
		// All of them are read: no pid to ask about, no time to read.
		sort.Strings(matched)
		c.Names = matched
		return c, nil
	}
	type file struct {
		name string
		live bool
		at   int64
	}
	var files []file
	for _, n := range matched {
		f := file{name: n, live: true}
		path := filepath.Join(dir, n)
		fi, err := os.Lstat(path)
		if err == nil {
			f.at = fi.ModTime().UnixNano()
		}
		if pid := pidOf(n); pid > 0 {
			// The process at the pid is the record's writer only when it
			// is the record's user's (or root's) and started before the
			// record was written: another user's process that took the
			// pid proves nothing, and must not push this user's newest
			// records past the bound (platform.RecordOwnerLive).
			uid, ok := uint32(0), false
			if err == nil {
				uid, ok = platform.FileUID(path, fi)
			}
			f.live = ok && platform.RecordOwnerLive(pid, uid, fi.ModTime())
		}
		files = append(files, f)
	}
	sort.SliceStable(files, func(i, j int) bool {
		if files[i].live != files[j].live {
			return files[i].live
		}
		if files[i].at != files[j].at {
			return files[i].at > files[j].at
		}
		return files[i].name < files[j].name
	})
	for k, f := range files {
		switch {
		case k < max:
			c.Names = append(c.Names, f.name)
		case f.live:
			c.LiveLeft++
		default:
			c.StaleLeft++
		}
	}
	return c, nil
}

// Doubt says why what c left unread may hide a live session's record
// (the owner's doubt), "" when it cannot.
func (c Chosen) Doubt(what string, max int) string {
	switch {
	case c.Unlisted:
		return fmt.Sprintf("more than %d entries: only some listed, and a live session's %s may be among the others", MaxListed-1, what)
	case c.LiveLeft > 0:
		return fmt.Sprintf("%d of the %s past the bound of %d not read, of live processes or not named by a pid", c.LiveLeft, what, max)
	}
	return ""
}

// Stale says how many stale records c left unread, "" when none: said,
// not doubt.
func (c Chosen) Stale(what string, max int) string {
	if c.StaleLeft == 0 {
		return ""
	}
	return fmt.Sprintf("the oldest %d of the %s, past the bound of %d, not read: of processes that are gone, they could only have proven their owners gone", c.StaleLeft, what, max)
}

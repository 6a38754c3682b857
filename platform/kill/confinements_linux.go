package kill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ConfineParent is the cgroup every confinement lives under, below the
// reaper's own cgroup.
const ConfineParent = "reaper.confine"

// confineParent is ConfineParent's path in the hierarchy.
func confineParent() (string, error) {
	self, err := selfCgroup()
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(self, "/") + "/" + ConfineParent, nil
}

// confinePrefix starts every confinement's name: "reaper-TAG-NANOS".
const confinePrefix = "reaper-"

// sweepAfter is how old an empty confinement must be before a run takes
// it for one whose maker is gone. A live maker's confinement is empty
// only between its making and the first move (microseconds) and between
// its cgroup.kill and its removal (a second at most), and a maker finds
// its confinement removed harmlessly: a removed cgroup held nothing.
const sweepAfter = 10 * time.Second

// ConfinementLeft is a confinement found under ConfineParent (or, from
// reapers before it, anywhere in the hierarchy): its path, when it was
// made, and whether processes are in it.
type ConfinementLeft struct {
	Path      string
	Made      time.Time
	Populated bool
}

// madeAt reads the time a confinement was made from its name.
func madeAt(name string) (time.Time, bool) {
	if !strings.HasPrefix(name, confinePrefix) {
		return time.Time{}, false
	}
	i := strings.LastIndexByte(name, '-')
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil || n < 1e18 { // nanoseconds since 2001: not a pid

		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

func sweepConfinementsOS(now time.Time) []string { return sweepConfinements(now, nil) }

// sweepConfinements is SweepConfinements over the confinements whose name
// only admits (nil: all): a test that moves the clock ahead sweeps its
// own, never another reap's that is a moment old.
func sweepConfinements(now time.Time, only func(name string) bool) []string {
	root := Cgroup2Root()
	if root == "" || os.Geteuid() != 0 {
		return nil
	}
	self, err := selfCgroup()
	if err != nil {
		return nil
	}
	self = strings.TrimSuffix(self, "/")
	parents := []string{self + "/" + ConfineParent, self}
	var removed []string
	for _, parent := range parents {
		names, err := os.ReadDir(root + parent)
		if err != nil {
			continue
		}
		for _, e := range names {
			made, ok := madeAt(e.Name())
			if !e.IsDir() || !ok || now.Sub(made) < sweepAfter || only != nil && !only(e.Name()) {
				continue
			}
			path := parent + "/" + e.Name() // parent is "" for the root
			if os.Remove(root+path) == nil {
				removed = append(removed, path)
			}
		}
	}
	return removed
}

// maxCgroupsWalked bounds doctor's walk of the hierarchy.
const maxCgroupsWalked = 20000

func confinements(now time.Time) ([]ConfinementLeft, error) {
	root := Cgroup2Root()
	if root == "" {
		return nil, fmt.Errorf("no cgroup v2 hierarchy: %w", errors.ErrUnsupported)
	}
	var out []ConfinementLeft
	walked := 0
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if walked++; walked > maxCgroupsWalked {
			return fmt.Errorf("more than %d cgroups: not all looked at", maxCgroupsWalked)
		}
		made, ok := madeAt(d.Name())
		if !ok {
			return nil
		}
		if now.Sub(made) >= sweepAfter {
			path := strings.TrimPrefix(dir, root)
			busy, _ := CgroupPopulated(path)
			out = append(out, ConfinementLeft{Path: path, Made: made, Populated: busy})
		}
		return fs.SkipDir // a confinement's own children are its
	})
	return out, err
}

package gather

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// Dir is a state dir to read: its path, the uid that owned it when it was
// listed — whose word it is, whom its reader runs as, and whose trees its
// doubt holds back: taken once, so that a dir renamed or replaced while it
// is read is still that user's doubt and nobody else's — what named it,
// and the client whose state it is.
type Dir struct {
	Path   string
	UID    uint32
	From   string
	Client string
	// byChange: of its records, only changed are read — a watch's pass,
	// its last read kept (Cache.Changed); changed are their names, as
	// "sessions/1234.json", one a line.
	byChange bool
	changed  string
}

// names are the records a dir read by change reads.
func (d Dir) names() []string {
	if d.changed == "" {
		return []string{}
	}
	return strings.Split(d.changed, "\n")
}

// maxNamedPerUID bounds the state dirs the processes of one uid may name
// in a run: a user can start any number of processes, each naming another
// directory.
const maxNamedPerUID = 8

// checkNamed checks a state dir a process names in its environment
// (OPENCLAW_STATE_DIR) before reaper reads it as that process's user's
// state: absolute and clean (no ".", ".." or doubled slash: "../..",
// "$HOME/link/../.." are refused as written, not resolved), not / and not
// below /proc (/proc/self/cwd, /proc/self/root name whatever the reader's
// own process has), reached through no symbolic link, a directory, and
// owned by uid, the real uid of the process that names it. A user's
// process can name any path; only a directory that user owns is theirs
// to speak for.
func checkNamed(dir string, uid uint32) error {
	switch {
	case dir == "":
		return fmt.Errorf("empty")
	case !filepath.IsAbs(dir):
		return fmt.Errorf("%q is not an absolute path", dir)
	case filepath.Clean(dir) != dir:
		return fmt.Errorf("%q is not a clean path", dir)
	case filepath.Dir(dir) == dir || platform.InProcFS(dir): // "/", `C:\`
		return fmt.Errorf("%q is not a state dir", dir)
	}
	owner, err := platform.DirOwnerNoLinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", dir, errNoDir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if owner != uid {
		return fmt.Errorf("%s is owned by uid %d, not by uid %d that names it", dir, owner, uid)
	}
	return nil
}

// errNoDir is a named dir that is not there, said one way on every OS
// (Windows' own words are the API's: "GetFileAttributesEx …: The system
// cannot find the file specified").
var errNoDir = noDir{}

type noDir struct{}

func (noDir) Error() string        { return "no such file or directory" }
func (noDir) Is(target error) bool { return target == fs.ErrNotExist }

// dirList is the state dirs of a run, each once, in the order found.
type dirList struct {
	dirs   []Dir
	seen   map[string]bool // listed, or named and refused: not checked again
	named  map[uint32]int  // dirs checked for each uid that named them
	homes  map[string]bool // uid:home whose guessed dirs are counted (addNamed)
	refuse []string        // named dirs refused, for the warnings
}

func (l *dirList) add(d Dir) {
	if l.seen == nil {
		l.seen, l.named = map[string]bool{}, map[uint32]int{}
	}
	if key := d.Client + ":" + d.Path; !l.seen[key] {
		l.seen[key] = true
		l.dirs = append(l.dirs, d)
	}
}

// addNamed adds a dir of client name that a process of uid names, if it
// passes checkNamed.
// A user's processes can name any number of paths: at most
// maxNamedPerUID are checked for each uid — every check walks the path
// from / — and a value seen once is not checked again.
// A dir guessed below a process's HOME (guessed) that does not exist is
// no warning.
func (l *dirList) addNamed(name, dir string, uidOf func() uint32, from string, guessed bool) {
	if l.seen == nil {
		l.seen, l.named = map[string]bool{}, map[uint32]int{}
	}
	if l.homes == nil {
		l.homes = map[string]bool{}
	}
	key := name + ":" + dir
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	// The namer's uid is read for a dir not seen before alone: as root it
	// is a read of the process's status, and a thousand orphans of one
	// user name the same dirs.
	uid := uidOf()
	// The dirs guessed below one home (each client's: .cline, .continue,
	// .copilot) are one name, counted once: a handful of a user's
	// processes with their own HOMEs must not spend the bound on dirs
	// that mostly do not exist, and leave a dir named outright, or the
	// next home's, unread. The checks stay bounded: as many per home as
	// there are clients that guess one.
	home := fmt.Sprint(uid) + ":" + filepath.Dir(dir)
	if !guessed || !l.homes[home] {
		if l.named[uid] >= maxNamedPerUID {
			l.refused(fmt.Sprintf("%s: state dir %s not read: uid %d's processes named more than %d state dirs", from, dir, uid, maxNamedPerUID))
			return
		}
		l.named[uid]++
		if guessed {
			l.homes[home] = true
		}
	}
	if err := checkNamed(dir, uid); err != nil {
		if !guessed || !errors.Is(err, fs.ErrNotExist) {
			l.refused(fmt.Sprintf("%s: state dir not read: %v", from, err))
		}
		return
	}
	l.dirs = append(l.dirs, Dir{Path: dir, UID: uid, From: from, Client: name})
}

// refused notes a named dir refused, up to maxSkipped of them.
func (l *dirList) refused(msg string) {
	if len(l.refuse) < maxSkipped {
		l.refuse = append(l.refuse, msg)
	}
}

// maxSkipped bounds the refusals listed in one run's warnings.
const maxSkipped = 16

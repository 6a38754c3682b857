package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

// hookCheck says whether the session-start hooks reaper installed in this
// user's clients' settings run a binary that is there: a hook bound to a
// binary that moved (an upgrade, a cache cleared) fails silently at every
// session start, its output sent nowhere. As root it reads root's own
// settings alone: root never parses what a user wrote.
func hookCheck(cs client.Set, getenv func(string) string, home, self string) audit.Check {
	c := audit.Check{Name: "hooks", Status: audit.CheckOK}
	var found, broken []string
	for _, cl := range cs.All() {
		in := cl.Info()
		if in.Hook == nil {
			continue
		}
		h := &setup.Hook{Client: in}
		path, err := h.Settings(getenv, home)
		if err != nil {
			continue
		}
		// As root, a file that is not root's (a user's, by an environment
		// sudo kept), or reached through a user's link, is not parsed.
		if run.EUID() == 0 {
			if uid, _, err := platform.PathSpeaker(path); err != nil || uid != 0 {
				if err == nil {
					found = append(found, fmt.Sprintf("%s (%s) is uid %d's: not read as root", in.Title, path, uid))
				} else if _, serr := os.Lstat(path); serr == nil {
					found = append(found, fmt.Sprintf("%s (%s): %v: not read as root", in.Title, path, err))
				}
				continue
			}
		}
		// Bounded, never blocking on a FIFO.
		data, owner, err := platform.ReadFileOwner(path, 16<<20)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			broken = append(broken, err.Error())
			continue
		}
		if run.EUID() == 0 && owner != 0 {
			found = append(found, fmt.Sprintf("%s (%s) is uid %d's: not read as root", in.Title, path, owner))
			continue
		}
		command, ok, err := setup.FindHook(data, in.Hook.Event, in.Hook.JSONC)
		switch {
		case err != nil && !bytes.Contains(data, []byte(setup.HookMark)):
			continue // a file reaper cannot read holds no hook of reaper's: nothing to judge
		case err != nil:
			broken = append(broken, fmt.Sprintf("%s:%v", path, err))
			continue
		case !ok:
			continue
		}
		bin := setup.HookBinary(command)
		st, err := os.Stat(bin)
		why, _ := setup.Transient(bin)
		switch {
		case why != "":
			broken = append(broken, fmt.Sprintf("%s's hook (%s) runs %s, which is %s: once it is gone every session start fails it", in.Title, path, bin, why))
		case err != nil:
			broken = append(broken, fmt.Sprintf("%s's hook (%s) runs %s, which is not there", in.Title, path, bin))
		case !platform.IsExecutable(bin, st):
			broken = append(broken, fmt.Sprintf("%s's hook (%s) runs %s, which is not an executable file", in.Title, path, bin))
		default:
			line := fmt.Sprintf("%s's hook (%s) runs %s", in.Title, path, bin)
			if self != "" && bin != self {
				line += " (not this binary, " + self + ")"
			}
			found = append(found, line)
		}
	}
	switch {
	case len(broken) > 0:
		c.Status = audit.CheckFail
		c.Summary = fmt.Sprintf("%s cannot run: every session start fails it, silently", audit.Plural(len(broken), "hook"))
		c.Details = append(broken, found...)
		c.Fix = "'reaper hook install CLIENT' from the reaper you keep (npm -g, Homebrew, go install, a package) binds it to that binary"
	case len(found) > 0:
		c.Summary = strings.Join(found, "; ")
	default:
		c.Status = audit.CheckInfo
		c.Summary = "no session-start hook of reaper's in this user's clients' settings ('reaper hook install claude-code' adds one)"
	}
	return c
}

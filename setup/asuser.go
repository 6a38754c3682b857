package setup

import (
	"context"
	"fmt"
	"os/user"
	"strconv"
	"time"

	"github.com/orphanreaper/reaper/platform/child"
)

// SettingsFlag is the hidden flag of `reaper hook install|uninstall` that
// names the settings file to edit: how root hands a user's file to a child
// running as that user (asUser), which edits exactly the path root was
// asked about, whatever the child's environment would say.
const SettingsFlag = "settings"

// runChild runs a child of reaper's own binary; the package's tests,
// whose binary is not reaper, see what would run instead.
var runChild = child.RunChild

// asUser makes the edit of a user's settings file as that user: root
// runs `reaper hook install|uninstall CLIENT --settings PATH` as uid:gid
// (platform.PathSpeaker says whose the path is), in a child with no
// supplementary groups, a minute at most, and relays what it says. A
// link the user planted on the way (settings.json -> /etc/docker/daemon.json,
// ~/.gemini -> /etc/cron.d) is then followed with the user's rights,
// which cannot write there; the user's own dotfiles link still works.
func (h *Hook) asUser(uid, gid uint32, path string, install bool) error {
	verb := "install"
	if !install {
		verb = "uninstall"
	}
	args := []string{"hook", verb, h.Client.Name, "--" + SettingsFlag, path}
	if h.DryRun {
		args = append(args, "--dry-run")
	}
	home := "/"
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil && u.HomeDir != "" {
		home = u.HomeDir
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := runChild(ctx, child.ChildSpec{
		Args: args,
		Env:  []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1"},
		Drop: true, UID: uid, GID: gid,
		MaxOut: 1 << 20, MaxErr: 4 << 10,
	})
	if len(out) > 0 {
		h.Out.Write(out)
	}
	if err != nil {
		return fmt.Errorf("%s is uid %d's: edited as that user, which failed: %w", path, uid, err)
	}
	fmt.Fprintf(h.Out, "(as uid %d, whose file it is)\n", uid)
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// Issue 51, attack 2: root's --lock-file in a directory every user can
// write (0777, not sticky, so fs.protected_fifos, which guards only sticky
// directories, does not apply whatever its value). An ordinary user puts
// a FIFO, a link to a root file, a hard link to a file of root's, or a
// file of their own at each of the lock's companions (the record of what
// is stopped, the respawn record, the seen-file). The reap must finish —
// an open(2) of a FIFO for writing waits for a reader, where no --timeout
// and no SIGTERM could end it — kill its orphan, say what it refused, and
// write nothing through what the user planted. The control is each
// subtest's orphan: the planted files do not stop its kill.
func TestAttackLockCompanions(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	for _, plant := range []string{"fifo", "symlink", "hardlink", "foreign"} {
		t.Run(plant, func(t *testing.T) {
			pid, _, pol := urlMarkedSetup(t, "companion-"+plant, 0o755,
				"[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n", "name = \"companions\"\naction = \"terminate\"\n")
			dir := sharedDir(t, 0o777)
			victim := filepath.Join(sharedDir(t, 0o755), "daemon.json")
			os.WriteFile(victim, []byte("root's"), 0o644)
			for _, name := range []string{"reaper.stopped", "reaper.respawns", "reaper.seen"} {
				plantAs(t, plant, filepath.Join(dir, name), victim)
			}
			r := runReaperWithin(t, 2*time.Minute, "reap", "--output", "json", "--journal", "off", "--timeout", "60s",
				"--policy", pol, "--lock-file", filepath.Join(dir, "reaper.lock"))
			var rep clitest.ReapReport
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("reap: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
			}
			if f := rep.Finding(pid); f == nil || f.Outcome != "killed" {
				t.Errorf("the orphan: %+v; want killed\n%s", f, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "not a file of this reaper's own") && !strings.Contains(r.Stdout, "symbolic link") {
				t.Errorf("the report does not say what it refused:\n%s", r.Stdout)
			}
			if b, _ := os.ReadFile(victim); string(b) != "root's" {
				t.Errorf("the planted link's target was written: %q", b)
			}
		})
	}
	// The lock itself: refused at once and said, the run fails closed.
	t.Run("lock", func(t *testing.T) {
		dir := sharedDir(t, 0o777)
		plantAs(t, "fifo", filepath.Join(dir, "reaper.lock"), "")
		r := runReaperWithin(t, 2*time.Minute, "reap", "--journal", "off", "--policy", clitest.WritePolicy(t, "version = 1\n"),
			"--lock-file", filepath.Join(dir, "reaper.lock"))
		if r.Code == 0 || !strings.Contains(r.Stderr, "FIFO") {
			t.Errorf("a FIFO as the lock: exit %d\n%s", r.Code, r.Stderr)
		}
	})
}

// plantAs puts at path, as user nobody would, one of the things a user
// can put in a directory they can write: a FIFO, a symbolic link to
// victim, a hard link to victim (which fs.protected_hardlinks allows only
// to the file's owner: root makes it here, as a file root can be tricked
// into linking would be), or a plain file of nobody's.
func plantAs(t *testing.T, kind, path, victim string) {
	t.Helper()
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(path, 0o666)
	case "symlink":
		err = os.Symlink(victim, path)
	case "hardlink":
		err = os.Link(victim, path)
	case "foreign":
		err = os.WriteFile(path, []byte("{}"), 0o666)
	}
	if err != nil {
		t.Fatal(err)
	}
	if kind != "hardlink" {
		os.Lchown(path, 65534, 65534)
	}
}

// runReaperWithin is runReaper with a deadline: a reaper still running
// then is killed and the test fails, so that a hang is a failure and not a
// suite that never ends.
func runReaperWithin(t *testing.T, within time.Duration, args ...string) clitest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	r := clitest.RunCmd(t, exec.CommandContext(ctx, clitest.Bin, args...))
	if ctx.Err() != nil {
		t.Fatalf("reaper %v still running after %s: it blocked\n%s%s", args, within, r.Stdout, r.Stderr)
	}
	return r
}

package run

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
	"github.com/orphanreaper/reaper/scan"
)

// Every file reaper keeps beside its lock goes through the one own-file
// rule (platform.OpenOwn, ReadOwn, WriteOwn): each of its users — the
// reap's lock, the watch's lock, doctor's look at the lock, the stop
// record (written and recovered), the respawn record (read and saved),
// the seen-file (read and saved) — refuses a FIFO (and does not hang on
// it), a symbolic link, a hard link and another user's file, and writes
// nothing through them. The control: with nothing planted, each works.
func TestOwnFilesRefuseWhatIsNotOwn(t *testing.T) {
	plants := []string{"fifo", "symlink", "hardlink", "foreign"}
	if os.Geteuid() != 0 {
		plants = plants[:3] // another user's file is made by root alone
		t.Log("not root: another user's file is not planted")
	}
	for _, plant := range append([]string{"none"}, plants...) {
		t.Run(plant, func(t *testing.T) {
			for name, u := range ownFileUsers(t) {
				dir := t.TempDir()
				victim := filepath.Join(dir, "victim")
				os.WriteFile(victim, []byte("victim's"), 0o644)
				path := u.file(filepath.Join(dir, "reaper.lock"))
				planted(t, plant, path, victim)
				done := make(chan error, 1)
				go func() { done <- u.use(path) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(time.Minute):
					t.Fatalf("%s: still waiting on a %s after a minute", name, plant)
				}
				switch {
				case plant == "none" && err != nil:
					t.Errorf("control, %s: %v", name, err)
				case plant != "none" && err == nil:
					t.Errorf("%s through a %s: not refused", name, plant)
				case plant != "none" && !errors.Is(err, platform.ErrNotOwn) && !errors.Is(err, platform.ErrSymlink) && !strings.Contains(err.Error(), "not a file of this reaper's own") && !strings.Contains(err.Error(), "symbolic link"):
					t.Errorf("%s through a %s: %v, want a refusal that says why", name, plant, err)
				}
				if b, _ := os.ReadFile(victim); string(b) != "victim's" {
					t.Errorf("%s through a %s wrote the victim: %q", name, plant, b)
				}
			}
		})
	}
}

// ownFileUse is one use of one of reaper's own files: the file, beside
// the lock, and the use, returning its refusal (nil: it read or wrote it).
type ownFileUse struct {
	file func(lock string) string
	use  func(file string) error
}

// ownFileUsers are the uses of reaper's own files.
func ownFileUsers(t *testing.T) map[string]ownFileUse {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	respawned := func(path string) error {
		s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
		if err != nil {
			return err
		}
		defer s.Close()
		root := s.Get(child.Process.Pid)
		if root == nil {
			t.Fatalf("the sleep %d is not in the table", child.Process.Pid)
		}
		plan := &policy.Plan{Items: []policy.Item{{Finding: &scan.Finding{Root: root}}}}
		return respawns{}.record(path, plan, []reap.Result{{Outcome: policy.Killed}}, s, time.Now(), time.Now())
	}
	same := func(lock string) string { return lock }
	return map[string]ownFileUse{
		"reap's lock": {same, func(path string) error {
			release, err := lock(path, 0)
			if err == nil {
				release()
			}
			return err
		}},
		"watch's lock": {func(l string) string { return paths.BesideLock(l).Watch }, func(path string) error {
			release, err := platform.Lock(path, 0)
			if err == nil {
				release()
			}
			return err
		}},
		"doctor's look at the lock": {same, func(path string) error {
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				os.WriteFile(path, nil, 0o600) // the control: a lock a reap made
			}
			_, _, err := platform.LockState(path)
			return err
		}},
		"the stop record, written": {func(l string) string { return paths.BesideLock(l).Stopped }, func(path string) error {
			l, err := openStopLog(path)
			if err == nil {
				l.Stopping(1, 1)
				l.done()
			}
			return err
		}},
		"the stop record, recovered": {func(l string) string { return paths.BesideLock(l).Stopped }, func(path string) error {
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				os.WriteFile(path, []byte("{}\n"), 0o600) // the control: a record a reap left
			}
			if w := recoverStopped(path); len(w) > 0 {
				return errors.New(strings.Join(w, "; "))
			}
			return nil
		}},
		"the respawn record, saved": {func(l string) string { return paths.BesideLock(l).Respawns }, respawned},
		"the seen-file, saved":      {func(l string) string { return paths.BesideLock(l).Seen }, func(path string) error { return audit.LoadSeen(path).Save() }},
	}
}

// planted puts at path what a user who can write its directory could: a
// FIFO, a symbolic link to victim, a hard link to victim, a file of
// nobody's (root only) — or nothing.
func planted(t *testing.T, kind, path, victim string) {
	t.Helper()
	var err error
	switch kind {
	case "none":
		return
	case "fifo":
		err = syscall.Mkfifo(path, 0o666)
	case "symlink":
		err = os.Symlink(victim, path)
	case "hardlink":
		err = os.Link(victim, path)
	case "foreign":
		if err = os.WriteFile(path, []byte("{}"), 0o666); err == nil {
			err = os.Chown(path, 65534, 65534)
		}
	}
	if err != nil {
		t.Fatalf("planting a %s at %s: %v", kind, path, err)
	}
}

package run

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run/gather"
)

// A watch's pass that judged a user's state as an earlier pass read it,
// and whose plan would signal, reads everyone's state again and plans
// from that before it acts: evidence under a live owner could make a
// finding of a kept read. The control: the same pass with nothing to
// signal keeps the read, and reads nothing again.
func TestReapRereadsKeptStateBeforeActing(t *testing.T) {
	if os.Geteuid() != 0 {
		skips.Skip(t, "needs root: another user's state, read by a reader child")
	}
	if raceEnabled {
		skips.Skip(t, "reader children do not run under -race (ThreadSanitizer's allocator exceeds their RLIMIT_DATA)")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	const uid = 65527
	// An OpenClaw state dir of the user's, empty: read all the same.
	base, err := os.MkdirTemp("", "reaper-reread-") // t.TempDir's parent is private
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "oc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(dir, uid, uid)
	t.Setenv("OPENCLAW_STATE_DIR", dir)
	// The user owns a process, so their state is read; it is the child of
	// a shell of root's, so no tree of theirs is a candidate (every child
	// of this test, a subreaper, is the root of one).
	user := exec.Command("bash", "-c", fmt.Sprintf("setpriv --reuid=%d --regid=%d --clear-groups sleep 600 & wait", uid, uid))
	user.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-user.Process.Pid, syscall.SIGKILL); user.Wait() })
	// Until setpriv has dropped to the user, the user owns no process and
	// the first pass would pass their state over rather than keep it.
	for deadline := time.Now().Add(5 * time.Second); !ownsProcess(uid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no process of uid %d after 5 s", uid)
		}
	}

	mark := fmt.Sprintf("reread-%d-%d", os.Getpid(), time.Now().UnixNano())
	self, _ := os.Readlink("/proc/self/exe")
	text := fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\n[[subreaper]]\ncmdline = '^%s( |$)'\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n",
		regexp.QuoteMeta(self), regexp.QuoteMeta(mark))
	pol, err := policy.Parse("test.toml", []byte(text), policy.Clients{Owners: all.Clients.Owners(), Marks: all.Clients.Marks()})
	if err != nil {
		t.Fatal(err)
	}
	cache := gather.NewCache()
	pass := func() *Reaped {
		t.Helper()
		now := time.Now()
		r, err := Reap(context.Background(), ReapConfig{
			Config:  Config{Policy: pol, Clients: all.Clients, Discover: true, Cache: cache, Timeout: time.Minute},
			Started: now, Deadline: now.Add(time.Minute), DryRun: true,
			LockFile: filepath.Join(t.TempDir(), "lock"), Records: Records{Journal: "off"},
		})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		return r
	}
	pass() // the first pass reads everyone's
	if r := pass(); r.Reread {
		t.Errorf("control, nothing to signal: the pass read every state again")
	}
	reads, _ := cache.Counts()
	orphan := exec.Command("bash", "-c", fmt.Sprintf("(exec -a %s sleep 60 &)", mark))
	if err := orphan.Run(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.HasPrefix(string(b), mark) {
				fmt.Sscan(e.Name(), &pid)
			}
		}
	}
	if pid == 0 {
		t.Fatal("the orphan did not start")
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	r := pass()
	after, _ := cache.Counts()
	if !r.Reread || after-reads < 2 {
		t.Errorf("a pass that would signal root's orphan %d: reread %v, %d dirs read; want every state read again (uid %d's too)", pid, r.Reread, after-reads, uid)
	}
}

// ownsProcess reports whether a process of uid runs, by its /proc dir's
// owner.
func ownsProcess(uid uint32) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if fi, err := os.Stat("/proc/" + e.Name() + "/stat"); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == uid && e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				return true
			}
		}
	}
	return false
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// Issue 64, item 10: a reap whose audit log cannot be written killed,
// exited 0 and recorded nothing. No act goes unrecorded: the reap asks
// first whether the log opens, and where it does not it signals nothing —
// each planned kill refused with the reason, exit 3, said on stderr. As
// an ordinary user the default log is below a home that cannot be
// written, the case reported; as root, an --audit-log in a dir no one can
// make. The control: a writable log, and the tree is killed and recorded.
func TestNoActUnrecorded(t *testing.T) {
	clitest.BecomeSubreaper(t)
	mark := fmt.Sprintf("unrec%d", os.Getpid())
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"1s\"\n%s[[rule]]\nname = \"t\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n", clitest.SelfSubreaper(t), mark))
	tree := adopt(t, "leftover-"+mark, "sleep 600; exit 0", nil)
	t.Cleanup(func() { syscall.Kill(tree, syscall.SIGKILL) })

	home := t.TempDir()
	os.Chmod(home, 0o500) // its owner may not write it: no ~/.local/state to make
	t.Cleanup(func() { os.Chmod(home, 0o700) })
	args := []string{"--policy", pol}
	env := []string{"HOME=" + home, "XDG_STATE_HOME="}
	if os.Geteuid() == 0 {
		args = append(args, "--audit-log", "/proc/nonexistent/audit.jsonl")
	}
	rep, r := clitest.ReapJSONEnv(t, env, args...)
	f := rep.Finding(tree)
	if f == nil || f.Outcome != "refused" || !strings.Contains(f.Detail, "record cannot be kept") || r.Code != 3 || !strings.Contains(r.Stderr, "nothing signalled") {
		t.Fatalf("a reap with no writable audit log: exit %d, finding %+v; want it refused, exit 3, said\n%s", r.Code, f, r.Stderr)
	}
	if !clitest.Alive(tree) {
		t.Fatalf("the tree was signalled with no record kept")
	}
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	rep, r = clitest.ReapJSONEnv(t, env, "--policy", pol, "--audit-log", log)
	b, _ := os.ReadFile(log)
	if f := rep.Finding(tree); f == nil || f.Outcome != "killed" || r.Code != 0 || !strings.Contains(string(b), `"outcome":"killed"`) {
		t.Errorf("control, a writable log: exit %d, finding %+v, log %q\n%s", r.Code, f, b, r.Stderr)
	}
}

package reap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
)

// forkerScript ignores SIGTERM (and so do its children: an ignored signal
// stays ignored across exec) and forks a child every 10 ms: a tree that
// keeps growing through the whole grace period.
const forkerScript = "trap '' TERM; while :; do sleep 60 & sleep 0.01; done"

// noConfine takes the confinement away, so the tree stays where it is.
func noConfine(*kill.Guard, string) (*kill.Confinement, error) {
	return nil, errors.ErrUnsupported
}

// noCgroupKill takes the unit path away, so the per-pid path is what runs.
func noCgroupKill(*kill.Guard, string, []*kill.Handle) ([]kill.Target, error) {
	return nil, errors.ErrUnsupported
}

// A process that outlives SIGTERM runs during grace and forks: before
// SIGKILL the reaper stops it again and takes in the new children, so
// nothing forked during grace is left (per pid, no cgroup).
func TestForkDuringGrace(t *testing.T) {
	cmd := startTree(t, forkerScript, true)
	pgid := cmd.Process.Pid
	waitMembers(t, pgid, 5)
	stillAlive(t, longLived(t, pgid)) // control: it does not go away on its own
	plan, s := planFor(t, pgid, policy.Terminate)
	rec := &recorder{}
	opt := options(rec)
	// Long enough for the forker to be scheduled during it on a machine
	// at load average 8: a grace it never ran in would fork nothing.
	opt.Grace = 1500 * time.Millisecond
	opt.killCgroup = noCgroupKill
	opt.confine = noConfine
	res := Execute(context.Background(), plan, s, opt)
	if res[0].Outcome != policy.Killed {
		t.Fatalf("outcome %s (%s)", res[0].Outcome, res[0].Detail)
	}
	waitGroupEmpty(t, pgid)
	// The children forked during grace were never sent SIGTERM: they were
	// found by the second stop-and-rescan and SIGKILLed.
	if kills, terms := rec.signals("SIGKILL"), rec.signals("SIGTERM"); kills <= terms {
		t.Errorf("%d SIGKILL, %d SIGTERM: the children forked during grace were not taken in", kills, terms)
	}
}

// longLived is the part of the forker's tree that stays unless something
// kills it: the shell at its root and the children that have already
// become "sleep 60". A child just forked still shows the shell's command
// line until it execs, and may be about to become "sleep 0.01" and exit:
// counting it made the control flaky, so only what has exec'd counts.
func longLived(t *testing.T, pid int) []int {
	t.Helper()
	out := []int{pid}
	for _, p := range treeOf(t, pid) {
		if b, err := os.ReadFile("/proc/" + itoa(p) + "/cmdline"); err == nil && string(b) == "sleep\x0060\x00" {
			out = append(out, p)
		}
	}
	return out
}

// waitGroupEmpty waits for process group pgid to have no live process.
func waitGroupEmpty(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for len(groupMembers(t, pgid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes of group %d left: %v", pgid, groupMembers(t, pgid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testCgroup creates a cgroup v2 for the test, or skips: it needs root and
// a writable cgroup v2 hierarchy with cgroup.kill (Linux 5.14). Cleanup
// kills what the cgroup still holds — through its own cgroup.kill, a
// cgroup this test created — and removes it.
func testCgroup(t *testing.T) (path, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		skips.Skip(t, "needs root: creates a cgroup (CI runs as root)")
	}
	root := kill.Cgroup2Root()
	if root == "" {
		skips.Skip(t, "no cgroup v2 hierarchy mounted")
	}
	path = fmt.Sprintf("/reaper-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir = root + path
	if err := os.Mkdir(dir, 0o755); err != nil {
		skips.Skipf(t, "cannot create a cgroup (%v): /sys/fs/cgroup is not writable here", err)
	}
	if _, err := os.Stat(dir + "/cgroup.kill"); err != nil {
		os.Remove(dir)
		skips.Skip(t, "no cgroup.kill: the kernel is older than 5.14")
	}
	t.Cleanup(func() {
		os.WriteFile(dir+"/cgroup.kill", []byte("1"), 0)
		for i := 0; i < 300; i++ {
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("cgroup %s not removed", dir)
	})
	return path, dir
}

// startInCgroup starts sh -c script directly inside the cgroup at dir
// (clone3 with CLONE_INTO_CGROUP), in a process group of its own.
func startInCgroup(t *testing.T, dir, script string) *exec.Cmd {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		skips.Skipf(t, "cannot start a process into a cgroup (%v)", err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

func cgroupProcs(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(dir + "/cgroup.procs")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// A tree that owns its cgroup: the last step is cgroup.kill, which takes
// the processes forked after the last rescan too; the cgroup is confirmed
// empty.
func TestCgroupKillOwnedCgroup(t *testing.T) {
	path, dir := testCgroup(t)
	cmd := startInCgroup(t, dir, forkerScript)
	pgid := cmd.Process.Pid
	waitMembers(t, pgid, 5)
	stillAlive(t, longLived(t, pgid)) // control
	if n := len(cgroupProcs(t, dir)); n < 5 {
		t.Fatalf("the cgroup holds %d processes, want the tree's", n)
	}
	plan, s := planFor(t, pgid, policy.Terminate)
	rec := &recorder{}
	opt := options(rec)
	opt.Grace = 300 * time.Millisecond
	opt.confine = noConfine // the tree's own cgroup, not a confinement
	res := Execute(context.Background(), plan, s, opt)
	if res[0].Outcome != policy.Killed || !strings.Contains(res[0].Detail, "killed as a unit") {
		t.Fatalf("outcome %s (%s), want killed through cgroup.kill", res[0].Outcome, res[0].Detail)
	}
	units := 0
	for _, e := range rec.events {
		if e.Via == "cgroup.kill "+path {
			units++
		}
	}
	if units == 0 {
		t.Errorf("no signal went through cgroup.kill %s; events %+v", path, rec.events)
	}
	if left := cgroupProcs(t, dir); len(left) > 0 {
		t.Errorf("the cgroup still holds %v", left)
	}
	waitGroupEmpty(t, pgid)
	t.Logf("%d processes killed through cgroup.kill: %s", units, res[0].Detail)
}

// A cgroup that also holds a process outside the tree is never killed as
// a unit: the seam refuses it, the tree dies per pid, the bystander lives.
func TestCgroupKillSharedCgroupRefused(t *testing.T) {
	path, dir := testCgroup(t)
	bystander := startInCgroup(t, dir, "exec sleep 60")
	cmd := startInCgroup(t, dir, forkerScript)
	pgid := cmd.Process.Pid
	waitMembers(t, pgid, 5)
	stillAlive(t, append(longLived(t, pgid), bystander.Process.Pid)) // control

	plan, s := planFor(t, pgid, policy.Terminate)
	rec := &recorder{}
	opt := options(rec)
	opt.Grace = 300 * time.Millisecond
	opt.confine = noConfine // the shared cgroup itself is what is tested
	res := Execute(context.Background(), plan, s, opt)
	if res[0].Outcome != policy.Killed {
		t.Fatalf("outcome %s (%s)", res[0].Outcome, res[0].Detail)
	}
	if !strings.Contains(res[0].Detail, "cgroup "+path+" not killed as a unit") {
		t.Errorf("detail %q does not say why the cgroup was not used", res[0].Detail)
	}
	for _, e := range rec.events {
		if e.Via != "" {
			t.Errorf("a signal went to the shared cgroup as a unit: %+v", e)
		}
	}
	waitGroupEmpty(t, pgid)
	stillAlive(t, []int{bystander.Process.Pid})
	if got := cgroupProcs(t, dir); len(got) != 1 || got[0] != itoa(bystander.Process.Pid) {
		t.Errorf("the cgroup holds %v, want only the bystander %d", got, bystander.Process.Pid)
	}
}

// The seam's own refusals for a unit: the root cgroup, a cgroup with a
// process that is no member, an empty cgroup.
func TestKillCgroupSeam(t *testing.T) {
	path, dir := testCgroup(t)
	g := kill.NewGuard(nil)
	if _, err := g.KillCgroup("/", nil); !errors.Is(err, platform.ErrRefused) {
		t.Errorf("root cgroup: %v, want refused", err)
	}
	if _, err := g.KillCgroup(path+"/../x", nil); err == nil {
		t.Errorf("unclean path accepted")
	}
	if _, err := g.KillCgroup(path, nil); !errors.Is(err, platform.ErrGone) {
		t.Errorf("empty cgroup: %v, want gone", err)
	}
	lone := startInCgroup(t, dir, "exec sleep 60")
	waitMembers(t, lone.Process.Pid, 1)
	if _, err := g.KillCgroup(path, nil); !errors.Is(err, platform.ErrRefused) {
		t.Errorf("cgroup holding a non-member: %v, want refused", err)
	}
	stillAlive(t, []int{lone.Process.Pid})
	// The same process as a verified member: the unit is the tree's.
	h, err := kill.Open(kill.Target{PID: lone.Process.Pid, StartTicks: startTicks(t, lone.Process.Pid)}, g)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got, err := h.Cgroup(); err != nil || got != path {
		t.Fatalf("handle's cgroup %q, %v; want %s", got, err, path)
	}
	// Denied by the guard (a live owner, say): refused even as a member.
	deny := kill.NewGuard(map[int]string{lone.Process.Pid: "a live owner"})
	if _, err := deny.KillCgroup(path, []*kill.Handle{h}); !errors.Is(err, platform.ErrRefused) {
		t.Errorf("denied member: %v, want refused", err)
	}
	stillAlive(t, []int{lone.Process.Pid})
	covered, err := g.KillCgroup(path, []*kill.Handle{h})
	if err != nil || len(covered) != 1 || covered[0].PID != lone.Process.Pid {
		t.Fatalf("owned cgroup: covered %v, %v", covered, err)
	}
	if !h.WaitGone(3 * time.Second) {
		t.Errorf("pid %d alive after cgroup.kill", lone.Process.Pid)
	}
}

func startTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	s, err := platform.ReadSnapshot("/proc")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	i := s.Index(pid)
	if i < 0 {
		t.Fatalf("pid %d not in the table", pid)
	}
	return s.Procs[i].StartTicks
}

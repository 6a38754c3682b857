package reap

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
)

// forkOnTermScript forks a child from its SIGTERM handler and exits: the
// child is reparented away from the tree, outside every walk of it. The
// shell's own child ignores SIGTERM, so the shell is always in wait when
// the signal comes, and the trap always runs (POSIX: a trapped signal
// makes wait return at once). All of them ignore SIGHUP: when the shell
// exits while a member of its group is still stopped, the group is
// orphaned with a stopped member and the kernel sends it SIGHUP and
// SIGCONT (POSIX orphaned process groups, kernel/exit.c
// kill_orphaned_pgrp), which would kill the child first at random.
const forkOnTermScript = "trap '' HUP; trap '(exec sleep 60) & exit 0' TERM; (trap '' TERM; exec sleep 60) & wait"

// startForkOnTerm starts forkOnTermScript and waits until its child has
// become "sleep 60": before that, the child may not yet ignore SIGTERM.
func startForkOnTerm(t *testing.T) int {
	t.Helper()
	cmd := startTree(t, forkOnTermScript, true)
	waitSleeping(t, cmd.Process.Pid)
	return cmd.Process.Pid
}

// waitSleeping waits until the tree of pid runs "sleep 60".
func waitSleeping(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(longLived(t, pid)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the tree of %d never ran sleep 60", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitNewInGroup polls until the group holds a live process not in before.
func waitNewInGroup(t *testing.T, pgid int, before []int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range groupMembers(t, pgid) {
			if !slices.Contains(before, pid) {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// Control: a plain SIGTERM to such a tree leaves a child it forked while
// dying alive. Without it, the tests below could pass by accident.
func TestForkOnTermControl(t *testing.T) {
	pgid := startForkOnTerm(t)
	before := groupMembers(t, pgid)
	syscall.Kill(pgid, syscall.SIGTERM)
	escaped := waitNewInGroup(t, pgid, before)
	if escaped == 0 {
		t.Fatal("control: the SIGTERM handler forked nothing that lives")
	}
	stillAlive(t, []int{escaped})
}

// A tree whose SIGTERM handler forks and exits: "killed" means the child
// it forked while dying is gone too. As root with a writable cgroup v2,
// the stopped tree is moved into a confinement first and the last step is
// its cgroup.kill; elsewhere the tree's process group is followed.
func TestForkOnTermKilled(t *testing.T) {
	eachKillPath(t, func(t *testing.T, confined bool) {
		pgid := startForkOnTerm(t)
		plan, s := planFor(t, pgid, policy.Terminate)
		opt := options(&recorder{})
		opt.Grace = 500 * time.Millisecond
		if !confined {
			opt.confine = noConfine
		}
		res := Execute(context.Background(), plan, s, opt)
		if res[0].Outcome != policy.Killed {
			t.Fatalf("outcome %s (%s), want killed", res[0].Outcome, res[0].Detail)
		}
		if got := strings.Contains(res[0].Detail, "confined in a cgroup of its own"); got != confined {
			t.Errorf("detail %q: confined %v, want %v", res[0].Detail, got, confined)
		}
		waitGroupEmpty(t, pgid)
		t.Logf("%s: %s", res[0].Outcome, res[0].Detail)
	})
}

// eachKillPath runs f on both ways a tree is killed: in a confinement (as
// root with a writable cgroup v2; skipped elsewhere) and by following its
// sessions and process groups.
func eachKillPath(t *testing.T, f func(t *testing.T, confined bool)) {
	for _, tt := range []struct {
		name     string
		confined bool
	}{{"confinement", true}, {"session and group", false}} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.confined && !canConfine() {
				skips.Skip(t, "needs root and a writable cgroup v2 with cgroup.kill (CI has them)")
			}
			f(t, tt.confined)
		})
	}
}

// A tree that keeps forking through grace and ignores SIGTERM, in a
// confinement: cgroup.kill takes everything, and the confinement is
// removed afterwards.
func TestForkerConfined(t *testing.T) {
	if !canConfine() {
		skips.Skip(t, "needs root and a writable cgroup v2 with cgroup.kill (CI has them)")
	}
	cmd := startTree(t, forkerScript, true)
	pgid := cmd.Process.Pid
	waitMembers(t, pgid, 5)
	stillAlive(t, longLived(t, pgid)) // control
	plan, s := planFor(t, pgid, policy.Terminate)
	rec := &recorder{}
	opt := options(rec)
	opt.Grace = 300 * time.Millisecond
	res := Execute(context.Background(), plan, s, opt)
	if strings.Contains(res[0].Detail, "/reaper-") {
		t.Errorf("the detail names the confinement's path, which is the JSON's: %q", res[0].Detail)
	}
	if res[0].Outcome != policy.Killed || !strings.Contains(res[0].Detail, "killed as a unit") {
		t.Fatalf("outcome %s (%s), want killed through the confinement", res[0].Outcome, res[0].Detail)
	}
	waitGroupEmpty(t, pgid)
	if strings.Contains(res[0].Detail, "could not be removed") {
		t.Errorf("confinement left behind: %s", res[0].Detail)
	}
}

// A child the tree forks while dying, which the gate refuses (here: every
// process that was not planned), is not signalled: the finding is failed
// with the survivor named, never killed.
func TestEscapeeRefusedIsNamed(t *testing.T) {
	pgid := startForkOnTerm(t)
	plan, s := planFor(t, pgid, policy.Terminate)
	planned := plan.Items[0].Finding.PIDs()
	rec := &recorder{}
	opt := options(rec)
	opt.Grace = 500 * time.Millisecond
	opt.confine = noConfine
	opt.Admit = func(_ *platform.Snapshot, p *platform.Process, _ *policy.Item) string {
		if slices.Contains(planned, p.PID) {
			return ""
		}
		return "not planned"
	}
	res := Execute(context.Background(), plan, s, opt)
	if res[0].Outcome != policy.Failed || !strings.Contains(res[0].Detail, "forked while dying are alive") {
		for _, e := range rec.events {
			t.Logf("%s %d %s %s", e.Time.Format("05.000000"), e.PID, e.Signal, e.Result)
		}
		t.Fatalf("outcome %s (%s), want failed naming the survivor", res[0].Outcome, res[0].Detail)
	}
	if left := groupMembers(t, pgid); len(left) != 1 {
		t.Errorf("group holds %v, want the one refused child", left)
	}
}

// canConfine reports whether this test process could make a confinement.
func canConfine() bool {
	c, err := kill.NewGuard(nil).Confine("probe-" + itoa(os.Getpid()))
	if err != nil {
		return false
	}
	c.Remove()
	return true
}

// A tree whose root forks every 10 ms while a process of the same user
// SIGCONTs its group in a loop, so stopping it never holds (attack 10 of
// the threat model): the rescans reach their bound with new processes
// still appearing. "killed" must then still mean the whole tree, forks
// included, is gone — or the finding is failed with the survivors named.
// Before the groups were taken at every rescan, 2 to 10 forks lived on
// under a finding called killed.
func TestForkerContinuedIsKilledWhole(t *testing.T) {
	eachKillPath(t, func(t *testing.T, confined bool) {
		cmd := startTree(t, "trap '' TERM; while :; do sleep 30 & sleep 0.001; done", true)
		pgid := cmd.Process.Pid
		startTree(t, "while :; do kill -CONT -"+itoa(pgid)+" 2>/dev/null; done", true)
		waitMembers(t, pgid, 5)
		stillAlive(t, []int{pgid}) // control: it lives and forks without the reaper
		plan, s := planFor(t, pgid, policy.Terminate)
		opt := options(&recorder{})
		opt.Grace = 300 * time.Millisecond
		if !confined {
			opt.confine = noConfine
		}
		res := Execute(context.Background(), plan, s, opt)
		switch res[0].Outcome {
		case policy.Killed:
			// Killed: nothing of the group may live (a SIGKILLed
			// process leaves the table within moments).
			deadline := time.Now().Add(2 * time.Second)
			for len(groupMembers(t, pgid)) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if left := groupMembers(t, pgid); len(left) > 0 {
				t.Fatalf("outcome killed (%s), but %d of the tree's forks live: %v", res[0].Detail, len(left), left)
			}
		case policy.Failed:
			if !strings.Contains(res[0].Detail, "are alive") {
				t.Fatalf("failed without naming survivors: %s", res[0].Detail)
			}
		default:
			t.Fatalf("outcome %s (%s), want killed or failed", res[0].Outcome, res[0].Detail)
		}
		t.Logf("%s: %s", res[0].Outcome, res[0].Detail)
	})
}

// startOrphan starts script as an orphan of its own session (setsid),
// adopted by this process's nearest subreaper, and returns its pid.
func startOrphan(t *testing.T, script string) int {
	t.Helper()
	file := t.TempDir() + "/pid"
	cmd := exec.Command("sh", "-c", `setsid -f sh -c 'echo $$ > "$0"; `+script+`' "$1" </dev/null >/dev/null 2>&1`, "sh", file)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return waitPIDFile(t, file)
}

// waitPIDFile polls for a pid written to file, and kills that pid when the
// test ends.
func waitPIDFile(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && len(b) > 1 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Issue 51, attack 6: a process the tree's adopter adopts during the
// reap — on a busy host, PID 1 adopts the host's own processes all the
// time — is the tree's only when the kernel ties it to the tree (its
// confinement, a session or group the tree held whole, a member's child
// at a rescan). Before, one of the tree's user that started after the
// scan in a group of its own was named as a possible fork and failed the
// reap (exit 3, the refused/failed alerts) though the whole tree was
// ended. Whenever it started, in whatever groups, it is no escapee now:
// the outcome is killed, and it is never signalled. Bystanders are
// started as the tree's user (the test's) and as another user when root.
// That a real fork while dying is still caught is TestForkOnTermKilled's
// and TestForkerConfined's, with TestForkOnTermControl showing it lives
// without the reaper.
func TestAdoptedDuringTheReapIsNotAnEscapee(t *testing.T) {
	for _, tt := range []struct {
		name         string
		startedAfter bool
		newSession   bool
	}{
		{"started before the scan", false, true},
		{"started after the scan, in groups the scan saw", true, false},
		{"started after the scan, in a session of its own", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := startOrphan(t, `trap "" TERM HUP; exec sleep 60`)
			bystander := func() int {
				// Its parent exits 1.5 s from now, well inside the grace:
				// the adopter adopts it after the reap's first rescan.
				file := t.TempDir() + "/pid"
				script := `sleep 60 & echo $! > "$0"; sleep 1.5`
				if tt.newSession {
					script = `setsid sleep 60 & echo $! > "$0"; sleep 1.5`
				}
				cmd := exec.Command("sh", "-c", script, file)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				go cmd.Wait()
				pid := waitPIDFile(t, file)
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				return pid
			}
			var other int
			if !tt.startedAfter {
				other = bystander()
				time.Sleep(20 * time.Millisecond) // a clock tick (USER_HZ 100) before the scan
			}
			plan, s := planFor(t, root, policy.Terminate)
			if tt.startedAfter {
				time.Sleep(20 * time.Millisecond)
				other = bystander()
			}
			opt := options(&recorder{})
			opt.Grace = 3 * time.Second
			opt.confine = noConfine
			res := Execute(context.Background(), plan, s, opt)
			if res[0].Outcome != policy.Killed {
				t.Errorf("outcome %s (%s), want killed: nothing ties pid %d to the tree", res[0].Outcome, res[0].Detail, other)
			}
			if syscall.Kill(other, 0) != nil {
				t.Errorf("the bystander %d was signalled", other)
			}
			if p, err := platform.ReadStat(root); err == nil && !p.Zombie() {
				t.Errorf("the tree's root %d lives", root)
			}
		})
	}
}

// With the graces of one reap side by side, one tree's fork while dying
// is adopted by the adopter another tree shares while that other tree is
// still being reaped. It is the forking tree's — in the session and group
// that tree held whole — and that tree kills it; the other tree must not
// name it as its own escapee. Both trees are killed, the fork too. The
// same fork out of every group (setsid) while the quiet tree alone is
// reaped is nothing of the quiet tree's either: killed, and the fork is
// not signalled.
func TestAnotherTreesForkIsNotAnEscapee(t *testing.T) {
	for _, together := range []bool{true, false} {
		t.Run(map[bool]string{true: "both trees in one reap", false: "the quiet tree alone, the fork by setsid"}[together], func(t *testing.T) {
			quiet := startOrphan(t, `trap "" TERM HUP; exec sleep 60`)
			script := forkOnTermScript
			forkFile := t.TempDir() + "/fork"
			if !together {
				script = strings.Replace(script, "trap '(exec sleep 60) & exit 0' TERM", "trap '(exec setsid sleep 60) & echo \\$! > "+forkFile+"; exit 0' TERM", 1)
			}
			forker := startOrphan(t, strings.ReplaceAll(script, "'", `"`)) // startOrphan quotes with '
			waitSleeping(t, forker)
			t.Cleanup(func() { syscall.Kill(-forker, syscall.SIGKILL) })
			if parentOf(t, quiet) != parentOf(t, forker) {
				t.Fatalf("the two trees have different adopters: %d, %d", parentOf(t, quiet), parentOf(t, forker))
			}
			opt := options(&recorder{})
			opt.Grace = 2 * time.Second
			opt.confine = noConfine
			if together {
				plan, s := planForAll(t, quiet, forker)
				res := Execute(context.Background(), plan, s, opt)
				for k, r := range res {
					if r.Outcome != policy.Killed {
						t.Errorf("tree %d: %s (%s), want killed", plan.Items[k].Finding.Root.PID, r.Outcome, r.Detail)
					}
				}
				waitGroupEmpty(t, forker) // its fork too, by the forker's own look
				return
			}
			plan, s := planFor(t, quiet, policy.Terminate)
			rec := &recorder{}
			opt.OnSignal = rec.add
			go func() {
				// The forker dies, forking, inside the quiet tree's grace:
				// once the quiet tree has its SIGTERM, however long a busy
				// machine took to send it (the grace is 2 s after it).
				for deadline := time.Now().Add(30 * time.Second); !rec.sent("SIGTERM", quiet) && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				syscall.Kill(forker, syscall.SIGTERM)
			}()
			res := Execute(context.Background(), plan, s, opt)
			fork := waitPIDFile(t, forkFile)
			t.Cleanup(func() { syscall.Kill(fork, syscall.SIGKILL) })
			if res[0].Outcome != policy.Killed {
				t.Errorf("the quiet tree: %s (%s), want killed", res[0].Outcome, res[0].Detail)
			}
			if syscall.Kill(fork, 0) != nil {
				t.Errorf("the other tree's fork %d was signalled by the quiet tree's reap", fork)
			}
		})
	}
}

// parentOf is pid's parent.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	p, err := platform.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	return p.PPID
}

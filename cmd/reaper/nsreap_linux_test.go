package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
	"github.com/orphanreaper/reaper/scan"
)

// runPIDNamespaceReapHelper is PID 1 of a new PID and mount namespace with
// its own procfs over /proc: it plans to terminate A, forces B onto A's pid,
// then carries the plan out.
func runPIDNamespaceReapHelper() {
	ownProc()
	fail := nsFail
	spawn := func() *os.Process {
		p, err := os.StartProcess("/bin/sleep", []string{"sleep", "60"}, &os.ProcAttr{})
		if err != nil {
			fail("spawn: %v", err)
		}
		return p
	}
	planFor := func(pid int) (*policy.Plan, *platform.Snapshot) {
		s, err := platform.ReadSnapshot("/proc")
		if err != nil {
			fail("snapshot: %v", err)
		}
		i := s.Index(pid)
		if i < 0 {
			fail("pid %d not in the snapshot", pid)
		}
		f := &scan.Finding{Root: &s.Procs[i], Members: []scan.Member{{Proc: &s.Procs[i]}}}
		return &policy.Plan{Mode: policy.ModeReap, Items: []policy.Item{{Finding: f, Rule: &policy.Rule{Name: "t"},
			Action: policy.Terminate, Outcome: policy.Planned}}}, s
	}
	execute := func(plan *policy.Plan, s *platform.Snapshot, pid int) (reap.Result, int) {
		ok := 0
		res := reap.Execute(context.Background(), plan, s, reap.Options{Grace: time.Second, ProcRoot: "/proc",
			Guard: kill.NewGuard(nil), Deadline: time.Now().Add(10 * time.Second),
			Admit: func(*platform.Snapshot, *platform.Process, *policy.Item) string { return "" },
			OnSignal: func(e reap.Event) {
				if e.PID == pid && e.Result == "ok" {
					ok++
				}
			}})
		return res[0], ok
	}

	a := spawn()
	pid := a.Pid
	time.Sleep(30 * time.Millisecond) // B must start in a later clock tick than A
	plan, s := planFor(pid)
	a.Kill()
	a.Wait()
	var b *os.Process
	for try := 0; try < 20 && b == nil; try++ {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			fail("write ns_last_pid: %v", err)
		}
		if p := spawn(); p.Pid == pid {
			b = p
		} else {
			p.Kill()
			p.Wait()
		}
	}
	if b == nil {
		fail("could not get pid %d again", pid)
	}
	res := nsReapResult{PID: pid}
	r, signalled := execute(plan, s, pid)
	res.Reused, res.SignalsToB = reapOutcome{string(r.Outcome), r.Detail}, signalled
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	res.BAliveAfter = err == nil
	plan, s = planFor(pid)
	r, _ = execute(plan, s, pid)
	res.Control = reapOutcome{string(r.Outcome), r.Detail}
	b.Wait()
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	os.Exit(0)
}

// nsFail ends a namespace helper with a message: it is a separate process,
// so it reports through its exit status and stderr, not a *testing.T.
func nsFail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}

// ownProc makes the mounts of a new mount namespace private and mounts a
// procfs of the helper's own PID namespace over /proc.
func ownProc() {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		nsFail("make mounts private: %v", err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		nsFail("mount proc: %v", err)
	}
}

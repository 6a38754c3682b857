package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
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

const envNSPid2 = "REAPER_TEST_NSPID2"

// In a container's PID namespace no kernel thread is visible, and pid 2
// is an ordinary process: here, an orphaned MCP server and its child. A
// reap in that namespace finds its tree and kills it, as on the host; the
// control, the same tree with no reaper, is alive a second later. Only
// the kernel's PF_KTHREAD flag makes a kernel thread (kthreadd is pid 2 of
// the host's namespace alone).
func TestPID2InANamespaceIsAProcess(t *testing.T) {
	clitest.RequireRoot(t)
	mark := "pid2mark" + clitest.Mark
	// The helper reads policy.toml, and keeps its lock, in the policy's dir.
	dir := filepath.Dir(clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n", mark)))
	// Its PID 1 dies with the test, and every process of its namespace
	// with it: nothing is left behind whatever happens.
	var got pid2Result
	out := inPIDNamespace(t, &got, envNSPid2+"="+dir, envReaperBin+"="+clitest.Bin, "REAPER_TEST_PID2MARK="+mark)
	t.Logf("in the namespace: %+v", got)
	if got.Root != 2 || got.Child <= 2 {
		t.Fatalf("the tree is pids %d and %d, want 2 and its child:\n%s", got.Root, got.Child, out)
	}
	if !got.ControlAlive {
		t.Fatalf("control: the tree did not live a second without a reaper:\n%s", out)
	}
	if got.Outcome != "killed" || fmt.Sprint(got.PIDs) != fmt.Sprint([]int{2, got.Child}) || got.Alive {
		t.Errorf("reap of pid 2's tree: outcome %q, pids %v, alive after %v; want killed, [2 %d], gone:\n%s", got.Outcome, got.PIDs, got.Alive, got.Child, out)
	}
}

type pid2Result struct {
	Root, Child  int
	ControlAlive bool
	Outcome      string
	PIDs         []int
	Alive        bool
}

// runPID2Helper is PID 1 of a new PID and mount namespace. Its first
// process after its own start is pid 2: a marked server with a child of
// its own. It waits a second (the control), runs `reaper reap` with a
// policy that names the mark, and says what became of the tree.
//
// A Go PID 1's threads take pids 2 and on (a thread's id is a pid), so
// it execs bash, which ends the threads, starts the tree at pid 2
// (ns_last_pid, pid_namespaces(7)) and execs this binary again as PID 1
// of the same namespace, the tree its child.
func runPID2Helper(dir string) {
	const stage = "REAPER_TEST_PID2STAGE"
	if os.Getenv(stage) == "" {
		ownProc()
		self, err := os.Executable()
		if err != nil {
			nsFail("%v", err)
		}
		script := `echo 1 >/proc/sys/kernel/ns_last_pid || exit 2
(exec -a "npm exec mcp-remote https://pid2.test $REAPER_TEST_PID2MARK" /bin/bash -c 'sleep 600 & wait; exit 0') &
exec "$REAPER_TEST_SELF"`
		err = syscall.Exec("/bin/bash", []string{"bash", "-c", script}, append(os.Environ(), stage+"=2", "REAPER_TEST_SELF="+self))
		nsFail("exec bash: %v", err)
	}
	// PID 1 reaps the tree's root when it ends, as an init does (only pid
	// 2: exec's Wait reaps the reaper). A zombie counts as gone below.
	go syscall.Wait4(2, nil, 0, nil)
	res := pid2Result{Root: 2}
	for i := 0; i < 100 && res.Child == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		if c := clitest.ChildrenOf(2); len(c) > 0 {
			res.Child = c[0]
		}
	}
	if cmdline := clitest.CmdlineOf(2); !strings.Contains(cmdline, os.Getenv("REAPER_TEST_PID2MARK")) {
		nsFail("pid 2 is not the marked server: %q", cmdline)
	}
	time.Sleep(time.Second)
	res.ControlAlive = clitest.Alive(res.Root) && res.Child > 0 && clitest.Alive(res.Child)
	r := exec.Command(os.Getenv(envReaperBin), "reap", "--output", "json", "--journal", "off",
		"--policy", filepath.Join(dir, "policy.toml"), "--lock-file", filepath.Join(dir, "lock"))
	b, err := r.Output()
	if err != nil {
		nsFail("reap: %v\n%s", err, b)
	}
	var rep struct {
		Findings []struct {
			RootPID int    `json:"root_pid"`
			PIDs    []int  `json:"pids"`
			Outcome string `json:"outcome"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		nsFail("%v\n%s", err, b)
	}
	for _, f := range rep.Findings {
		if f.RootPID == res.Root {
			res.Outcome, res.PIDs = f.Outcome, f.PIDs
		}
	}
	time.Sleep(100 * time.Millisecond)
	res.Alive = clitest.Alive(res.Root) || res.Child > 0 && clitest.Alive(res.Child)
	fmt.Fprintf(os.Stderr, "reap's report: %s\n", b)
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	os.Exit(0)
}

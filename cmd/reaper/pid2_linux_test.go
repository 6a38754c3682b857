package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const envNSPid2 = "REAPER_TEST_NSPID2"

// In a container's PID namespace no kernel thread is visible, and pid 2
// is an ordinary process: here, an orphaned MCP server and its child. A
// reap in that namespace finds its tree and kills it, as on the host; the
// control, the same tree with no reaper, is alive a second later. Only
// the kernel's PF_KTHREAD flag makes a kernel thread (kthreadd is pid 2 of
// the host's namespace alone).
func TestPID2InANamespaceIsAProcess(t *testing.T) {
	requireRoot(t)
	mark := "pid2mark" + suiteMark
	// The helper reads policy.toml, and keeps its lock, in the policy's dir.
	dir := filepath.Dir(writePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\ngrace = \"2s\"\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"terminate\"\n", mark)))
	// Its PID 1 dies with the test, and every process of its namespace
	// with it: nothing is left behind whatever happens.
	var got pid2Result
	out := inPIDNamespace(t, &got, envNSPid2+"="+dir, envReaperBin+"="+reaperBin, "REAPER_TEST_PID2MARK="+mark)
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
		if c := childrenOf(2); len(c) > 0 {
			res.Child = c[0]
		}
	}
	if cmdline := cmdlineOf(2); !strings.Contains(cmdline, os.Getenv("REAPER_TEST_PID2MARK")) {
		nsFail("pid 2 is not the marked server: %q", cmdline)
	}
	time.Sleep(time.Second)
	res.ControlAlive = alive(res.Root) && res.Child > 0 && alive(res.Child)
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
	res.Alive = alive(res.Root) || res.Child > 0 && alive(res.Child)
	fmt.Fprintf(os.Stderr, "reap's report: %s\n", b)
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	os.Exit(0)
}

// alive: pid is a process of this namespace that has not exited (a zombie
// has).
func alive(pid int) bool {
	st := stateOf(pid)
	return st != "" && st != "Z" && st != "X"
}

package platform_test

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// envWinHelper makes this test binary, run again, a helper of the
// Windows tests: "parent" starts a child like itself and prints its pid
// once the child says it is up, then waits to be killed; "child" says so
// and sleeps. The wait is readiness: under wine a process writes its own
// PEB's command line and environment while it starts, so a read just
// after CreateProcess can find them empty.
const envWinHelper = "REAPER_WINTEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(envWinHelper) {
	case "parent":
		child := exec.Command(os.Args[0], "-test.run", "^$", "mcp-server-wintest")
		child.Env = append(os.Environ(), envWinHelper+"=child")
		up, err := child.StdoutPipe()
		if err == nil {
			err = child.Start()
		}
		if err == nil {
			_, err = up.Read(make([]byte, 8))
		}
		if err != nil {
			fmt.Println("start:", err)
			os.Exit(2)
		}
		fmt.Println(child.Process.Pid)
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	case "child":
		fmt.Println("up")
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A parent killed while its child lives (TerminateProcess: Windows' and
// wine's SIGKILL): the child keeps the dead parent's pid, the live table
// marks it ParentGone, and the scan finds its tree with the parent's pid
// in the words. Before the kill — the control — the child is its
// parent's, and no finding.
func TestWindowsLiveOrphan(t *testing.T) {
	mark := fmt.Sprintf("wintest-%d-%d", os.Getpid(), time.Now().UnixNano())
	parent := exec.Command(os.Args[0], "-test.run", "^$")
	parent.Env = append(os.Environ(), envWinHelper+"=parent", "REAPER_WINTEST_MARK="+mark)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	if err != nil {
		t.Fatalf("the parent said no child: %v", err)
	}
	childPID, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("the parent said %q", buf[:n])
	}
	child, err := os.FindProcess(childPID) // a handle: the pid is pinned while it is open
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Kill(); child.Wait() })

	orphan := func() (*platform.Snapshot, *platform.Process) {
		s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
		if err != nil {
			t.Fatal(err)
		}
		p := s.Get(childPID)
		if p == nil {
			t.Fatalf("the child %d is not in the table", childPID)
		}
		return s, p
	}
	s, p := orphan()
	if p.ParentGone() || p.PPID != parent.Process.Pid {
		t.Fatalf("control: the child's ppid %d (want %d), ParentGone %v while its parent lives", p.PPID, parent.Process.Pid, p.ParentGone())
	}
	if argv := s.Cmdline(p); len(argv) < 4 || argv[3] != "mcp-server-wintest" {
		t.Errorf("the child's argv from its PEB: %q", argv)
	}
	if v, ok := s.Getenv(p, "REAPER_WINTEST_MARK"); !ok || v != mark {
		t.Errorf("the child's environment from its PEB: REAPER_WINTEST_MARK %q %v, want %q", v, ok, mark)
	}

	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	s, p = orphan()
	if !p.ParentGone() || p.PPID != parent.Process.Pid {
		t.Fatalf("the child's ppid %d (want the dead parent's %d), ParentGone %v", p.PPID, parent.Process.Pid, p.ParentGone())
	}
	res, _ := scan.Scan(s, policy.Default(policy.Clients{}).ScanConfig(), nil)
	for _, f := range res.Findings {
		if f.Root.PID == childPID {
			if want := fmt.Sprintf("its parent %d exited", parent.Process.Pid); len(f.Evidence) == 0 || !strings.HasPrefix(f.Evidence[0], want) {
				t.Errorf("the orphan's evidence %q, want %q first", f.Evidence, want)
			}
			if f.Kind != scan.KindMCP {
				t.Errorf("kind %s, want mcp (its argv names an mcp-server)", f.Kind)
			}
			return
		}
	}
	t.Errorf("the orphan %d is no finding of the scan", childPID)
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform/kill"
)

const envNSService = "REAPER_TEST_NSSERVICE"

// A service's own process is not an orphan: in a PID namespace of its own,
// whose PID 1 plays the service manager, an MCP server started into a
// cgroup named like a service unit is not a finding; the same server
// started into a cgroup named like a scope (a terminal, a login session),
// the control, is reparented.
func TestServiceProcessIsNotAnOrphan(t *testing.T) {
	clitest.RequireRoot(t)
	root := kill.Cgroup2Root()
	if root == "" {
		skips.Skip(t, "no cgroup v2 hierarchy")
	}
	base := fmt.Sprintf("%s/reaper-svc-%d-%d", root, os.Getpid(), time.Now().UnixNano())
	if err := os.Mkdir(base, 0o755); err != nil {
		skips.Skipf(t, "cannot create a cgroup (%v)", err)
	}
	t.Cleanup(func() {
		for _, d := range []string{base + "/mcp-memory.service", base + "/app-term-1.scope", base} {
			os.WriteFile(d+"/cgroup.kill", []byte("1"), 0)
			for i := 0; i < 100 && os.Remove(d) != nil; i++ {
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
	var got struct{ ServiceFound, ScopeFound bool }
	out := inPIDNamespace(t, &got, envNSService+"="+base, envReaperBin+"="+clitest.Bin)
	if got.ServiceFound {
		t.Errorf("the service's own process is a finding:\n%s", out)
	}
	if !got.ScopeFound {
		t.Errorf("control: the same process in a scope is not a finding:\n%s", out)
	}
}

// runNSServiceHelper is PID 1 of a new PID and mount namespace: it starts
// the same command into a *.service and a *.scope cgroup below dir, runs
// `reaper scan`, and prints which of the two are findings.
func runNSServiceHelper(dir string) {
	ownProc()
	fail := nsFail
	start := func(cg string) int {
		if err := os.Mkdir(filepath.Join(dir, cg), 0o755); err != nil {
			fail("%v", err)
		}
		fd, err := unix.Open(filepath.Join(dir, cg), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fail("%v", err)
		}
		defer unix.Close(fd)
		c := exec.Command("bash", "-c", "sleep 600; exit 0")
		c.Args[0] = "npm exec mcp-remote https://service.test"
		c.Path = "/bin/bash"
		c.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		if err := c.Start(); err != nil {
			fail("start into %s: %v", cg, err)
		}
		return c.Process.Pid
	}
	service, scope := start("mcp-memory.service"), start("app-term-1.scope")
	c := exec.Command(os.Getenv(envReaperBin), "scan", "--output", "json", "--journal", "off")
	b, err := c.Output()
	if err != nil {
		fail("scan: %v\n%s", err, b)
	}
	var rep struct {
		Findings []struct {
			RootPID int `json:"root_pid"`
		} `json:"findings"`
		Totals struct {
			Unmatched int `json:"unmatched"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		fail("%v", err)
	}
	found := map[int]bool{}
	for _, f := range rep.Findings {
		found[f.RootPID] = true
	}
	fmt.Fprintf(os.Stderr, "service pid %d, scope pid %d, findings %v\n", service, scope, rep.Findings)
	res, _ := json.Marshal(struct{ ServiceFound, ScopeFound bool }{found[service], found[scope]})
	fmt.Println(string(res))
	os.Exit(0)
}

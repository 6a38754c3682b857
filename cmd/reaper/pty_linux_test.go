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

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform/host"
)

// ptsOf reads N of the /dev/pts/N on pid's stdin.
func ptsOf(t *testing.T, pid int) int {
	t.Helper()
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscanf(link, "/dev/pts/%d", &n); err != nil {
		t.Fatalf("stdin of %d is %q, not a pts", pid, link)
	}
	return n
}

type ptyReport struct {
	PTYs []struct {
		PTS    int  `json:"pts"`
		Dead   bool `json:"dead"`
		Slaves []struct {
			PID int `json:"pid"`
		} `json:"slaves"`
		Why string `json:"why"`
	} `json:"ptys"`
	Dead []int `json:"dead"`
}

func ptyJSON(t *testing.T) *ptyReport {
	t.Helper()
	r := clitest.RunReaper(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "pty", "--output", "json")
	if r.Code != 0 {
		t.Fatalf("reaper pty: exit %d: %s", r.Code, r.Stderr)
	}
	var rep ptyReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	return &rep
}

// TestDeadPTY: the gateway holding a PTY's master is SIGKILLed while its
// shell holds the slave: the PTY is reported dead. The control: while the
// gateway lives, the same PTY is in use and not dead.
func TestDeadPTY(t *testing.T) {
	clitest.BecomeSubreaper(t)
	g := startGateway(t, "18811")
	roots := rootsOf(t, g)
	n := ptsOf(t, roots.pty)
	state := func(rep *ptyReport) (found, dead bool, why string) {
		for _, p := range rep.PTYs {
			if p.PTS == n {
				return true, p.Dead, p.Why
			}
		}
		return false, false, ""
	}
	if found, dead, _ := state(ptyJSON(t)); !found || dead {
		t.Fatalf("control: /dev/pts/%d found %v, dead %v; want in use", n, found, dead)
	}
	g.cmd.Process.Signal(syscall.SIGKILL)
	g.cmd.Wait()
	clitest.WaitFor(t, func() bool { return clitest.ParentOf(roots.pty) == os.Getpid() }, "the shell to be reparented")
	found, dead, why := state(ptyJSON(t))
	if !found || !dead || !strings.Contains(why, "master was closed") {
		t.Errorf("/dev/pts/%d after its master holder died: found %v, dead %v (%s)", n, found, dead, why)
	}
	// The scan says so too, for the finding that holds it.
	var rep struct {
		Findings []struct {
			RootPID int `json:"root_pid"`
			PTYs    []struct {
				PTS    int  `json:"pts"`
				HungUp bool `json:"hung_up"`
			} `json:"ptys"`
		} `json:"findings"`
		PTY struct {
			Dead []struct {
				PTS int `json:"pts"`
			} `json:"dead"`
		} `json:"pty"`
	}
	r := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", integrationPolicy(t))
	json.Unmarshal([]byte(r.Stdout), &rep)
	hung, listed := false, false
	for _, f := range rep.Findings {
		for _, p := range f.PTYs {
			hung = hung || f.RootPID == roots.pty && p.PTS == n && p.HungUp
		}
	}
	for _, d := range rep.PTY.Dead {
		listed = listed || d.PTS == n
	}
	if !hung || !listed {
		t.Errorf("scan: the PTY finding holds a hung-up /dev/pts/%d: %v, listed dead: %v\n%s", n, hung, listed, r.Stdout)
	}
}

// TestActivityAfterDone: two PTY runs of a live gateway are marked done
// while their shells live on. The one that keeps working is
// active_after_done: true; the idle one is false.
func TestActivityAfterDone(t *testing.T) {
	clitest.BecomeSubreaper(t)
	g := startGatewayWith(t, "18812", []clitest.SpawnSpec{
		{Args: []string{"/bin/bash", "-c", "while :; do build; done"}, PTY: true, Busy: true},
		{Args: []string{"/bin/bash", "-c", "read line"}, PTY: true},
	})
	var busy, idle int
	for pid := range g.pids {
		switch clitest.CmdlineOf(pid) {
		case "/bin/bash -c while :; do build; done":
			busy = pid
		case "/bin/bash -c read line":
			idle = pid
		}
	}
	if busy == 0 || idle == 0 {
		t.Fatalf("shells not found: busy %d idle %d", busy, idle)
	}
	time.Sleep(100 * time.Millisecond)
	ended := time.Now().UTC()
	time.Sleep(time.Second) // both keep running past their run's end
	l := &ledger.Ledger{Owner: ledger.Owner{Name: "fake-gateway", PID: g.cmd.Process.Pid, Start: identity(t, g.cmd.Process.Pid, g)}}
	for id, pid := range map[string]int{"busy": busy, "idle": idle} {
		l.Runs = append(l.Runs, ledger.Run{ID: id, Kind: "pty", PID: pid, Start: identity(t, pid, g), State: ledger.RunDone, EndedAt: &ended})
	}
	path := filepath.Join(t.TempDir(), "ledger.json")
	if err := ledger.WriteFile(path, l); err != nil {
		t.Fatal(err)
	}
	r := clitest.RunReaper(t, nil, "scan", "--output", "json", "--policy", clitest.WritePolicy(t, ledgerPolicy), "--ledger", path)
	var rep struct {
		Findings []struct {
			RootPID  int    `json:"root_pid"`
			RunID    string `json:"run_id"`
			Activity *struct {
				Active   bool     `json:"active_after_done"`
				Written  uint64   `json:"written_bytes_delta"`
				Evidence []string `json:"evidence"`
			} `json:"activity"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	got := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Activity == nil {
			t.Errorf("run %s: no activity evidence", f.RunID)
			continue
		}
		got[f.RunID] = f.Activity.Active
		t.Logf("run %s: active_after_done %v, %v", f.RunID, f.Activity.Active, f.Activity.Evidence)
	}
	if active, ok := got["busy"]; !ok || !active {
		t.Errorf("the busy shell: active_after_done %v (found %v), want true", active, ok)
	}
	if active, ok := got["idle"]; !ok || active {
		t.Errorf("the idle shell: active_after_done %v (found %v), want false", active, ok)
	}
}

// TestZombieGroup: a parent with three unreaped zombies is one group of
// three, with the parent's identity and command.
func TestZombieGroup(t *testing.T) {
	// The children exit after bash has exec'd into a sleep that never reaps:
	// were they to exit first, bash would reap them.
	parent := exec.Command("bash", "-c", "sleep 0.3 & sleep 0.3 & sleep 0.3 & exec sleep 60; exit 0")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	clitest.WaitFor(t, func() bool {
		n := 0
		for _, pid := range clitest.ChildrenOf(parent.Process.Pid) {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(b), ") Z ") {
				n++
			}
		}
		return n == 3
	}, "three zombies")
	r := clitest.RunReaper(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "scan", "--output", "json")
	var rep struct {
		ZombieGroups []struct {
			ParentPID     int    `json:"parent_pid"`
			ParentCmdline string `json:"parent_cmdline"`
			ParentStart   string `json:"parent_start"`
			Count         int    `json:"count"`
			PIDs          []int  `json:"pids"`
		} `json:"zombie_groups"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	groups := 0
	for _, g := range rep.ZombieGroups {
		if g.ParentPID == parent.Process.Pid {
			groups++
			if g.Count != 3 || len(g.PIDs) != 3 || g.ParentCmdline != "sleep 60" || g.ParentStart == "" {
				t.Errorf("group %+v, want 3 zombies under `sleep 60`", g)
			}
		}
	}
	if groups != 1 {
		t.Errorf("%d groups for parent %d, want 1: %+v", groups, parent.Process.Pid, rep.ZombieGroups)
	}
}

// scan and pty judge a finding's terminal alike. An orphan keeps a live
// terminal on its stdio — its master held by this test, alive and no
// finding (the detached `setsid -f` of a tmux shell) — and neither calls
// it dead, nor when the master is in flight over a unix socket (held by
// no process, still open); once the master is closed, both do, for the
// same reason.
func TestPTYJudgedAlike(t *testing.T) {
	clitest.BecomeSubreaper(t)
	master, slave, err := clitest.OpenPTY()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	link, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", slave.Fd()))
	slave.Close()
	mark := "ptyalike" + strings.ReplaceAll(clitest.Mark, "-", "x")
	pid := adopt(t, "npm exec alike-mcp "+mark, fmt.Sprintf("exec <%s >%s 2>&1; sleep 60; exit 0", link, link), nil)
	clitest.WaitFor(t, func() bool {
		l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
		return l == link
	}, "the orphan to take the terminal as its stdio")
	n := ptsOf(t, pid)
	pol := clitest.WritePolicy(t, fmt.Sprintf("version = 1\n[defaults]\nmin_age = \"0s\"\n%s\n[[rule]]\nname = \"marked\"\nwhen = [\"reparented\"]\ncmdline = '%s'\naction = \"report\"\n", clitest.SelfSubreaper(t), mark))

	judge := func() (ptyDead bool, ptyWhy string, scanDead bool, scanWhy string) {
		t.Helper()
		for _, p := range ptyJSON(t).PTYs {
			if p.PTS == n {
				ptyDead, ptyWhy = p.Dead, p.Why
			}
		}
		r := clitest.RunReaper(t, nil, "scan", "--policy", pol, "-o", "json")
		var rep struct {
			PTY struct {
				Dead []struct {
					PTS int    `json:"pts"`
					Why string `json:"why"`
				} `json:"dead"`
			} `json:"pty"`
			Findings []struct {
				RootPID int `json:"root_pid"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("scan: %v\n%s\n%s", err, r.Stdout, r.Stderr)
		}
		found := false
		for _, f := range rep.Findings {
			found = found || f.RootPID == pid
		}
		if !found {
			t.Fatalf("scan: no finding for %d:\n%s", pid, r.Stdout)
		}
		for _, d := range rep.PTY.Dead {
			if d.PTS == n {
				scanDead, scanWhy = true, d.Why
			}
		}
		return
	}
	if pd, pw, sd, sw := judge(); pd || sd {
		t.Errorf("master held by a live process: pty dead %v (%s), scan dead %v (%s); want neither", pd, pw, sd, sw)
	}
	// The master in flight: sent over a unix socket and closed here, so
	// that no process holds it while it is still open. No process holding
	// the master is not death: the slave is not hung up.
	sock, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Sendmsg(sock[0], []byte{0}, syscall.UnixRights(int(master.Fd())), nil, 0); err != nil {
		t.Fatal(err)
	}
	master.Close()
	// Only a reaper that read every fd on the host can say where the master
	// is not; as another user, or in a PID namespace, it is "not visible".
	everyFd := os.Geteuid() == 0 && host.HostPIDNamespace()
	if pd, pw, sd, sw := judge(); pd || sd || everyFd && !strings.Contains(pw, "in flight") || !everyFd && !strings.Contains(pw, "not visible") {
		t.Errorf("master in flight: pty dead %v (%s), scan dead %v (%s); want neither, and where the master is", pd, pw, sd, sw)
	}
	syscall.Close(sock[0])
	syscall.Close(sock[1]) // the message, and the master with it, is dropped
	clitest.WaitFor(t, func() bool {
		l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid))
		return strings.HasSuffix(l, " (deleted)")
	}, "the slave to be hung up")
	pd, pw, sd, sw := judge()
	if !pd || !sd || !strings.Contains(pw, "master was closed") || !strings.Contains(sw, "master was closed") {
		t.Errorf("master closed: pty dead %v (%s), scan dead %v (%s); want both dead, its master closed", pd, pw, sd, sw)
	}
}

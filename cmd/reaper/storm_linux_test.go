package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// envForker makes this test binary a parent that starts RATE children a
// second for SECONDS, each running ARGV ("RATE SECONDS ARGV…"), then
// lives on (until helperLifetime) for the test to see it was not
// signalled.
const envForker = "REAPER_TEST_FORKER"

func runForker(spec string) {
	var rate, secs int
	f := strings.Fields(spec)
	fmt.Sscan(f[0], &rate)
	fmt.Sscan(f[1], &secs)
	argv := f[2:]
	start := time.Now()
	for i := 0; time.Since(start) < time.Duration(secs)*time.Second; i++ {
		c := exec.Command(argv[0], argv[1:]...)
		if c.Start() == nil {
			go c.Wait()
		}
		// Paced from the start, not from the last child: the rate holds
		// however long each start takes.
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second / time.Duration(rate))))
	}
	time.Sleep(clitest.HelperLifetime)
	os.Exit(0)
}

// TestForkStorm: a parent starting 100 processes a second for 5 s under
// reaper watch is named — its pid and its rate — in a line on the watch's
// stderr, and nothing is signalled: the parent lives, and no pass acted.
// Where the kernel's fork events can be had they count its short-lived
// children; elsewhere (a PID namespace of its own, an old kernel as a
// user) samples count the children alive when sampled (here they live 2
// s). The control: a parent starting 5 a second for as long is never
// named.
func TestForkStorm(t *testing.T) {
	mark := fmt.Sprintf("storm%d", os.Getpid())
	pol := watchPolicy(t, "", mark, `"reparented", "owner-dead"`, "min_age = \"0s\"\nstorm_rate = 30")
	w := clitest.StartWatch(t, pol, "--backstop", "1s")
	// Short-lived children where the kernel's fork events can be had (as
	// doctor says: on the host, as root or on Linux 6.6+); elsewhere the
	// watch samples, and a child counts when it is alive at a sample.
	child := "sleep 2"
	if d := clitest.RunReaper(t, nil, "doctor", "-o", "json"); strings.Contains(d.Stdout, "every fork seen as it happens") {
		child = "/bin/true"
	}
	t.Logf("the storm's children: %s", child)
	forker := func(rate int) int {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c := exec.Command(self)
		// Not the mark: the test's rule would take it as its own tree.
		c.Args = []string{fmt.Sprintf("storm-parent-%d", rate)}
		c.Env = append(os.Environ(), fmt.Sprintf("%s=%d 5 %s", envForker, rate, child))
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
		return c.Process.Pid
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the watch's stdout:\n%s\nits stderr:\n%s", w.Stdout, w.Stderr)
		}
	})
	calm := forker(5)
	started := time.Now()
	storm := forker(100)
	line := ""
	clitest.WaitFor(t, func() bool {
		line = clitest.GrepLines(w.Stderr.String(), fmt.Sprintf("fork storm: pid %d ", storm))
		return line != ""
	}, "the storm's line")
	t.Logf("said %s after the storm began: %s", time.Since(started).Round(10*time.Millisecond), line)
	if !strings.Contains(line, "processes a second") || !strings.Contains(line, "storm_rate 30") {
		t.Errorf("the storm's line %q: want its rate and the policy's", line)
	}
	// The storm's end is said once its 5 s are over — and the calm
	// parent, started first, has forked its 5 s by then: it was never
	// said.
	clitest.WaitFor(t, func() bool {
		return strings.Contains(w.Stderr.String(), fmt.Sprintf("fork storm over: pid %d ", storm))
	}, "the storm's end")
	if strings.Contains(w.Stderr.String(), fmt.Sprintf("fork storm: pid %d ", calm)) {
		t.Errorf("a parent starting 5 a second was named a storm:\n%s", w.Stderr.String())
	}
	if !clitest.Alive(storm) || !clitest.Alive(calm) {
		t.Errorf("a forking parent was signalled (storm alive %t, calm alive %t)", clitest.Alive(storm), clitest.Alive(calm))
	}
	if out := w.Stdout.String(); strings.Contains(out, "killed") || strings.Contains(out, "terminated") {
		t.Errorf("the watch acted during the storm:\n%s", out)
	}
}

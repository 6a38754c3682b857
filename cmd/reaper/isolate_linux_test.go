package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// isolated runs the calling test again, alone, in a PID namespace and
// /proc of its own (unshare --pid --fork --mount-proc, as root), and
// reports whether it did: the caller then returns, its result the inner
// run's. Inside, /proc holds only the test's processes: what other work
// on the machine starts, ends or leaves orphaned — other agents' sessions,
// other reapers' passes, other test binaries' stand-ins — cannot change
// what reaper sees, and every process the test leaves ends with the
// namespace (its init, the test binary, exits; the kernel SIGKILLs the
// rest). As an ordinary user it runs as it is: a user's reaper sees and
// signals only that user's processes, and the test's are its own.
func isolated(t *testing.T) bool {
	t.Helper()
	if os.Getenv(clitest.EnvIsolated) == "1" || os.Geteuid() != 0 {
		return false
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Logf("no unshare (util-linux): the test runs beside the host's processes")
		return false
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	args := []string{"--pid", "--fork", "--mount-proc", "--kill-child", os.Args[0], "-test.run", strings.Join(run, "/"), "-test.count=1", "-test.v"}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), clitest.EnvIsolated+"=1", clitest.EnvBin+"="+clitest.Bin)
	out, err := cmd.CombinedOutput()
	t.Logf("in a PID namespace of its own (%s):\n%s", strings.Join(cmd.Args, " "), out)
	if err != nil {
		t.Fatalf("the test in its own PID namespace failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the test in its own PID namespace did not pass (no %q in its output)", "--- PASS: "+t.Name())
	}
	return true
}

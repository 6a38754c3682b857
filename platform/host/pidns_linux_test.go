package host

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/skips"
)

// A process in a PID namespace of its own is told it does not see the
// host's table; the control, the same helper in the test's own namespace,
// answers as the test does (true on a host, false in a container).
func TestHostPIDNamespace(t *testing.T) {
	if os.Getenv("REAPER_PIDNS_HELPER") != "" {
		fmt.Println(HostPIDNamespace())
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		skips.Skip(t, "needs root: a PID namespace of its own for the helper")
	}
	run := func(flags uintptr) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHostPIDNamespace$")
		cmd.Env = append(os.Environ(), "REAPER_PIDNS_HELPER=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(syscall.CLONE_NEWPID); got != "false" {
		t.Errorf("in a PID namespace of its own: %q, want false", got)
	}
	if got, want := run(0), fmt.Sprint(HostPIDNamespace()); got != want {
		t.Errorf("control, the test's own namespace: %q, want %q as the test sees", got, want)
	}
	t.Logf("this test runs in the host's PID namespace: %v", HostPIDNamespace())
}

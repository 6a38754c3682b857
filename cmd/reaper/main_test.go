package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/orphanreaper/reaper/internal/skips"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// reaperBin is the binary built once for every test of this package that
// runs the real program.
var reaperBin string

func TestMain(m *testing.M) {
	// The integration tests re-execute this test binary as their fake
	// gateways and children; those never reach the tests.
	runHelperIfAsked()
	// Orphans that no test started, then the mark every test rule is
	// confined to: the sentinels never carry it.
	if err := startSentinels(); err != nil {
		fmt.Fprintln(os.Stderr, "sentinels:", err)
		os.Exit(1)
	}
	setMark()
	dir, err := os.MkdirTemp("", "reaper-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // tests run the binary as other users too
	reaperBin = filepath.Join(dir, "reaper")
	// -buildvcs=false: in a checkout another user owns (root's, run by an
	// ordinary user), git refuses to read it and the build would fail
	// with "error obtaining VCS status"; the tests need no revision.
	build := exec.Command(goTool(), "build", "-buildvcs=false", "-o", reaperBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build reaper: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The runner's own setup is not the tests': a policy in its
	// ~/.config/reaper would be what every run of the binary reads. A test
	// that wants a user's policy sets HOME and XDG_CONFIG_HOME itself.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	code := m.Run()
	skips.Summary(os.Stderr)
	os.RemoveAll(dir)
	if dead := checkSentinels(); len(dead) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the suite's reaping killed orphans no test started: %v\n", dead)
		code = 1
	}
	os.Exit(code)
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go" // not on PATH: the build step says so
}

// result is one run of the real binary.
type result struct {
	stdout, stderr string
	code           int
}

// runReaper runs the built binary with args and env added to the test's.
func runReaper(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(reaperBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run reaper %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

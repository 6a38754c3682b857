package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/paths"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// reaperBin is the binary built once for every test of this package that
// runs the real program.
var reaperBin string

// envIsolated marks a test binary run inside a PID namespace of its own
// (isolated, Linux); envBin names the reaper binary the outer run built,
// which the inner one uses as it is.
const (
	envIsolated = "REAPER_TEST_ISOLATED"
	envBin      = "REAPER_TEST_BIN"
)

// buildReaper builds the binary the tests run, at reaperBin.
// -buildvcs=false: in a checkout another user owns (root's, run by an
// ordinary user), git refuses to read it and the build would fail with
// "error obtaining VCS status"; the tests need no revision. It is built
// with the test binary's own CGO_ENABLED, so that every package below
// main is the one go test compiled already, from the same cache: a
// second full compile of the product (a forced CGO_ENABLED=0 when the
// tests were built with cgo) took 7 minutes of a cold first run on a
// busy 2-core machine. CI exports CGO_ENABLED=0, the product's as
// shipped, to test that build.
func buildReaper() ([]byte, error) {
	build := exec.Command(goTool(), "build", "-buildvcs=false", "-o", reaperBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED="+testsCgo())
	return build.CombinedOutput()
}

// testsCgo is the CGO_ENABLED this test binary was built with ("0" where
// its build info does not say).
func testsCgo() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "CGO_ENABLED" {
				return s.Value
			}
		}
	}
	return "0"
}

func TestMain(m *testing.M) {
	// The integration tests re-execute this test binary as their fake
	// gateways and children; those never reach the tests.
	runHelperIfAsked()
	// However the suite ends, what it started ends with it
	// (superviseIfFirst).
	superviseIfFirst()
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
	if bin := os.Getenv(envBin); os.Getenv(envIsolated) == "1" && bin != "" {
		// A test run again in a namespace of its own (isolated): the
		// outer run's binary, as it is.
		reaperBin = bin
	} else if out, err := buildReaper(); err != nil {
		fmt.Fprintf(os.Stderr, "build reaper: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The runner's own setup and state are not the tests': a policy in its
	// ~/.config/reaper would be what every run of the binary reads, and a
	// user's reap writes its audit log under ~/.local/state by default.
	// Every run of the binary and every helper gets the suite's own HOME
	// and XDG dirs (hermetic); a test that wants a user's sets them
	// itself. That the runner's own are left as they were is checked at
	// the end (runnersState).
	runner := runnersDirs()
	before := runnersState(runner)
	if err := hermetic(dir); err != nil {
		fmt.Fprintln(os.Stderr, "hermetic dirs:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	skips.Summary(os.Stderr)
	os.RemoveAll(dir)
	if after := runnersState(runner); after != before {
		fmt.Fprintf(os.Stderr, "FAIL: the suite changed the running user's own reaper state, config or cache:\nbefore:\n%safter:\n%s", before, after)
		code = 1
	}
	if dead := checkSentinels(); len(dead) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the suite's reaping killed orphans no test started: %v\n", dead)
		code = 1
	}
	endLeftHelpers()
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
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns what it printed and its exit status; a
// command that cannot be started fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// hermetic gives this process — and so every run of the binary and every
// helper, which inherit its environment — a HOME and XDG dirs of its own
// under dir. Go's caches stay where they are (a test that runs go would
// otherwise rebuild from nothing), named explicitly before HOME moves.
func hermetic(dir string) error {
	out, err := exec.Command(goTool(), "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		os.Setenv([]string{"GOCACHE", "GOMODCACHE", "GOPATH"}[i], v)
	}
	// HOME and XDG_CONFIG_HOME the suite's, readable by the other users
	// tests run the binary as (dir is 0755); the other XDG dirs unset, so
	// that they follow HOME — the suite's, or the one a test gives a run.
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o755); err != nil {
		return err
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, k := range []string{"XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"} {
		os.Unsetenv(k)
	}
	return nil
}

// runnersDirs are where reaper keeps the running user's own things, as
// the environment names them before hermetic: its config dir and the
// audit log's dir whole, the system units' audit log, and — in the cache
// and runtime dirs, where the suite's installs of the real clients live
// too (scripts/install-*.sh) — the lock and its records alone.
func runnersDirs() []string {
	home, _ := os.UserHomeDir()
	env := func(k, fallback string) string {
		if v := os.Getenv(k); filepath.IsAbs(v) {
			return v
		}
		return fallback
	}
	dirs := []string{
		filepath.Join(env("XDG_CONFIG_HOME", filepath.Join(home, ".config")), "reaper"),
		filepath.Join(env("XDG_STATE_HOME", filepath.Join(home, ".local", "state")), "log", "reaper"),
		paths.SystemAuditLog,
	}
	places := []string{filepath.Join(env("XDG_CACHE_HOME", filepath.Join(home, ".cache")), "reaper")}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		places = append(places, rt)
	}
	for _, dir := range places {
		for _, name := range []string{"reaper.lock", "reaper.stopped", "reaper.respawns", "reaper.seen", "reaper.watch"} {
			dirs = append(dirs, filepath.Join(dir, name))
		}
	}
	return dirs
}

// runnersState lists what is in those dirs — names, sizes and
// modification times: the suite must leave it as it found it.
func runnersState(dirs []string) string {
	var b strings.Builder
	// And the package's own directory, the tests' working directory: a
	// reap that put its memory beside a lock it named "" wrote ".seen"
	// here (a checkout may be read-only, and is no one's state).
	if ents, err := os.ReadDir("."); err == nil {
		for _, e := range ents {
			fmt.Fprintf(&b, "./%s\n", e.Name())
		}
	}
	for _, d := range dirs {
		filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if fi, err := e.Info(); err == nil {
				fmt.Fprintf(&b, "%s %d %s\n", path, fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
			}
			return nil
		})
	}
	return b.String()
}

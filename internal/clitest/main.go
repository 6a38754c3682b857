package clitest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/paths"
)

// Bin is the binary built once for every test of this package that
// runs the real program.
var Bin string

// EnvIsolated marks a test binary run inside a PID namespace of its own
// (isolated, Linux); EnvBin names a reaper binary built already, which
// the tests use as it is: the outer run's, for the inner one; or one
// built for another OS by the script that runs the tests there, where no
// Go toolchain is (scripts/wine-test.sh's reaper.exe).
const (
	EnvIsolated = "REAPER_TEST_ISOLATED"
	EnvBin      = "REAPER_TEST_BIN"
)

// Build builds the binary the tests run, at reaperBin.
// -buildvcs=false: in a checkout another user owns (root's, run by an
// ordinary user), git refuses to read it and the build would fail with
// "error obtaining VCS status"; the tests need no revision. It is built
// with the test binary's own CGO_ENABLED, so that every package below
// main is the one go test compiled already, from the same cache: a
// second full compile of the product (a forced CGO_ENABLED=0 when the
// tests were built with cgo) took 7 minutes of a cold first run on a
// busy 2-core machine. CI exports CGO_ENABLED=0, the product's as
// shipped, to test that build.
func Build(pkg string) ([]byte, error) {
	build := exec.Command(GoTool(), "build", "-buildvcs=false", "-o", Bin, pkg)
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

// Options are what a package of tests that runs the binary asks of Main.
type Options struct {
	// Package is the directory of cmd/reaper, from the tests' own ("."
	// for cmd/reaper's, ".." for the real clients' suites).
	Package string
	// Helpers turns the test binary, re-executed, into one of the
	// package's own helpers when the environment names one (and never
	// returns then); nil where the package has none but RunSpecIfAsked's.
	Helpers func()
	// Needed says whether any test of this run needs the binary (the
	// real clients' suites skip unless the clients are installed): when
	// it says no, nothing is built. Nil: always.
	Needed func() bool
}

// Main is a test package's TestMain: its helpers, the supervisor, the
// sentinels and the mark, the binary built once, the suite's own HOME
// and XDG dirs; then the tests; then the checks that the runner's own
// state is as it was and that every sentinel lived, and what the tests
// left running ended. It exits with the suite's status.
func Main(m *testing.M, o Options) {
	if o.Helpers != nil {
		o.Helpers()
	}
	RunSpecIfAsked()
	// However the suite ends, what it started ends with it
	// (SuperviseIfFirst).
	SuperviseIfFirst()
	// Orphans that no test started, then the mark every test rule is
	// confined to: the sentinels never carry it.
	if err := StartSentinels(); err != nil {
		fmt.Fprintln(os.Stderr, "sentinels:", err)
		os.Exit(1)
	}
	SetMark()
	dir, err := os.MkdirTemp("", "reaper-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // tests run the binary as other users too
	Bin = filepath.Join(dir, "reaper")
	if bin := os.Getenv(EnvBin); bin != "" {
		// Built already: the outer run's binary, for a test run again in
		// a namespace of its own (isolated); or the one built for wine.
		Bin = bin
	} else if o.Needed != nil && !o.Needed() {
		Bin = "" // no test of this run runs it
	} else if out, err := Build(o.Package); err != nil {
		fmt.Fprintf(os.Stderr, "build reaper: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The runner's own setup and state are not the tests': a policy in its
	// ~/.config/reaper would be what every run of the binary reads, and a
	// user's reap writes its audit log under ~/.local/state by default.
	// Every run of the binary and every helper gets the suite's own HOME
	// and XDG dirs (Hermetic); a test that wants a user's sets them
	// itself. That the runner's own are left as they were is checked at
	// the end (RunnersState).
	runner := RunnersDirs()
	before := RunnersState(runner)
	if err := Hermetic(dir); err != nil {
		fmt.Fprintln(os.Stderr, "hermetic dirs:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	skips.Summary(os.Stderr)
	os.RemoveAll(dir)
	if after := RunnersState(runner); after != before {
		fmt.Fprintf(os.Stderr, "FAIL: the suite changed the running user's own reaper state, config or cache:\nbefore:\n%safter:\n%s", before, after)
		code = 1
	}
	if dead := CheckSentinels(); len(dead) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the suite's reaping killed orphans no test started: %v\n", dead)
		code = 1
	}
	EndLeftHelpers()
	os.Exit(code)
}

func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go" // not on PATH: the build step says so
}

// Result is one run of the real binary.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// RunReaper runs the built binary with args and env added to the test's.
func RunReaper(t *testing.T, env []string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(Bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return RunCmd(t, cmd)
}

// RunCmd runs cmd and returns what it printed and its exit status; a
// command that cannot be started fails the test.
func RunCmd(t *testing.T, cmd *exec.Cmd) Result {
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
	return Result{stdout.String(), stderr.String(), code}
}

// Hermetic gives this process — and so every run of the binary and every
// helper, which inherit its environment — a HOME and XDG dirs of its own
// under dir. Go's caches stay where they are (a test that runs go would
// otherwise rebuild from nothing), named explicitly before HOME moves.
func Hermetic(dir string) error {
	// go's own dirs stay where they were (under the runner's HOME by
	// default): where there is no go (wine's), there are none to keep.
	if goTool, err := exec.LookPath("go"); err == nil {
		out, err := exec.Command(goTool, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err != nil {
			return fmt.Errorf("go env: %w", err)
		}
		for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			os.Setenv([]string{"GOCACHE", "GOMODCACHE", "GOPATH"}[i], v)
		}
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
	// Windows' per-user places (paths' windows) are the suite's too.
	if runtime.GOOS == "windows" {
		for k, sub := range map[string]string{"USERPROFILE": "", "APPDATA": "AppData/Roaming", "LOCALAPPDATA": "AppData/Local"} {
			d := filepath.Join(home, filepath.FromSlash(sub))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			os.Setenv(k, d)
		}
	}
	return nil
}

// RunnersDirs are where reaper keeps the running user's own things, as
// the environment names them before hermetic: its config dir and the
// audit log's dir whole, the system units' audit log, and — in the cache
// and runtime dirs, where the suite's installs of the real clients live
// too (scripts/install-*.sh) — the lock and its records alone.
func RunnersDirs() []string {
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

// RunnersState lists what is in those dirs — names, sizes and
// modification times: the suite must leave it as it found it.
func RunnersState(dirs []string) string {
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

// Root is the module's root directory, found from the test's working
// directory up (where go.mod is): the testdata and packaging files are
// named from there, whichever package's tests read them.
func Root() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			panic("no go.mod above " + dir)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// runHelperIfAsked turns this process into a helper when the environment
// says so, and never returns then.
func runHelperIfAsked() {
	runReaderIfAsked() // the reaper run in-process starts this binary as its reader
	if dir := os.Getenv(envNSTest); dir != "" {
		runPIDNamespaceHelper(dir)
	}
	if os.Getenv(envNSReap) != "" {
		runPIDNamespaceReapHelper()
	}
	if dir := os.Getenv(envJournal); dir != "" {
		runJournalHelper(dir)
	}
	if os.Getenv(envNSControl) != "" {
		runNSControlHelper()
	}
	if os.Getenv(envNoDump) != "" {
		runNoDumpHelper()
	}
	if home := os.Getenv(envRenamer); home != "" {
		runRenamer(home)
	}
	if dir := os.Getenv(envNSService); dir != "" {
		runNSServiceHelper(dir)
	}
	if dir := os.Getenv(envNSPid2); dir != "" {
		runPID2Helper(dir)
	}
	if spec := os.Getenv(envForker); spec != "" {
		runForker(spec)
	}
}

// inPIDNamespace runs this test binary as PID 1 of a new PID and mount
// namespace, env added to the test's (env names the helper it becomes),
// and decodes the JSON of the last line it prints into res; it returns
// all it printed. The namespace, and every process in it, ends with its
// PID 1, and PID 1 with the test (Pdeathsig).
func inPIDNamespace(t *testing.T, res any, env ...string) []byte {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := execHelper(self, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("namespace helper: %v\n%s", err, out)
	}
	if err := json.Unmarshal(lastLine(out), res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// execHelper is an exec.Cmd for path with env added to the test's.
func execHelper(path string, env ...string) *exec.Cmd {
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// urlMarkedSetup is the setup of a test whose reaper runs as another user
// and can't read the env mark: an orphaned MCP-shaped tree whose argv
// carries a URL with the suite's mark and name, a directory other users
// can reach (mode), and in it a policy (defaults, then one rule of the
// given lines) whose rule matches reparented trees of that URL only.
func urlMarkedSetup(t *testing.T, name string, mode os.FileMode, defaults, rule string) (pid int, dir, pol string) {
	t.Helper()
	url := "https://" + name + "-" + clitest.Mark + ".test"
	pid = adopt(t, "npm exec mcp-remote "+url, "sleep 60; exit 0", nil)
	dir = sharedDir(t, mode)
	pol = filepath.Join(dir, "policy.toml")
	text := fmt.Sprintf("version = 1\n%s%s\n[[rule]]\nwhen = [\"reparented\"]\ncmdline = '%s'\n%s", defaults, clitest.SelfSubreaper(t), regexp.QuoteMeta(url), rule)
	if err := os.WriteFile(pol, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return pid, dir, pol
}

//go:build linux

package clitest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// envSupervised marks the test binary its supervisor started.
const envSupervised = "REAPER_TEST_SUPERVISED"

// SuperviseIfFirst makes this process, when it is the test binary as go
// test started it, the suite's supervisor, and never returns then: it
// becomes a subreaper, runs the same binary with the same arguments as
// its child (the suite itself), with a TMPDIR of its own, and when that
// child has ended — passed, failed, panicked at go test's -timeout, or
// SIGKILLed — it ends every process left below it and removes the TMPDIR,
// then exits with the child's status. The suite adopts its own orphans
// while it runs (it is a subreaper too); once it is gone, they come to
// the supervisor, the next subreaper up: so however the suite ends, no
// helper it started outlives it under PID 1, and no temp dir of its
// stays (issue 64, item 8).
func SuperviseIfFirst() {
	if os.Getenv(envSupervised) != "" || os.Getenv(EnvIsolated) == "1" {
		return
	}
	os.Exit(supervise())
}

func supervise() int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "supervise the suite:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "reaper-suite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise the suite:", err)
		return 1
	}
	os.Chmod(tmp, 0o755) // the tests run the binary as other users too
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise the suite:", err)
		return 1
	}
	suite := exec.Command(self, os.Args[1:]...)
	suite.Args[0] = os.Args[0]
	suite.Stdin, suite.Stdout, suite.Stderr = os.Stdin, os.Stdout, os.Stderr
	suite.Env = append(os.Environ(), envSupervised+"=1", "TMPDIR="+tmp)
	// A terminal's Ctrl-C reaches both; a signal for this process alone
	// (go test's, a runner's) is passed on. The suite ends as it ends.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	if err := suite.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "supervise the suite:", err)
		os.RemoveAll(tmp)
		return 1
	}
	go func() {
		for s := range sigs {
			suite.Process.Signal(s)
		}
	}()
	err = suite.Wait()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		code = ee.ExitCode()
	case errors.As(err, &ee):
		code = 1 // ended by a signal
		fmt.Fprintf(os.Stderr, "the suite ended: %v\n", err)
	case err != nil:
		code = 1
	}
	if n := endOrphans(); n > 0 {
		fmt.Fprintf(os.Stderr, "the suite's supervisor ended %d processes the suite left when it ended\n", n)
	}
	os.RemoveAll(tmp)
	return code
}

// endOrphans ends every process below this one (each verified by its
// start before it is signalled, killTreeVerified), until none is left or
// a minute has passed, collecting what comes back to it; it returns how
// many processes it found.
func endOrphans() int {
	seen := map[int]bool{}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		left := LiveTree(os.Getpid())[1:]
		for _, pid := range left {
			seen[pid] = true
		}
		for _, pid := range ChildrenOf(os.Getpid()) {
			KillTreeVerified(pid)
		}
		for {
			var ws syscall.WaitStatus
			if pid, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 {
				break
			}
		}
		if len(left) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return len(seen)
}

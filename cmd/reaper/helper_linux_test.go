package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
)

// spawnSpec describes a helper process: the argv it shows (Args), the
// environment it adds, how it is detached, and the children it starts.
// Helpers are this test binary re-executed with REAPER_TEST_SPEC set, so a
// "claude-agent-acp" or "npm exec" of the tests is a real process with that
// command line and no dependency on the real programs.
type spawnSpec struct {
	Args    []string
	Env     []string
	Setsid  bool // its own session (node's detached: true)
	Setpgid bool // its own process group
	PTY     bool // a session leader with a new pseudo-terminal as stdio
	Busy    bool // keeps working: writes a line to its stdout every 20 ms
	// Lifetime, when set, replaces helperLifetime for it and its children.
	Lifetime time.Duration
	Children []spawnSpec
}

const (
	envSpec   = "REAPER_TEST_SPEC"
	envPIDDir = "REAPER_TEST_PIDDIR"
	// helperLifetime bounds every helper: a test that fails before its
	// cleanup runs cannot leave them behind for long (systemd's oomd tests
	// do the same).
	helperLifetime = 3 * time.Minute
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
	raw := os.Getenv(envSpec)
	if raw == "" {
		return
	}
	var spec spawnSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "helper spec:", err)
		os.Exit(2)
	}
	// A long command under a PTY outlives the hangup of its master (nohup,
	// daemons, `trap '' HUP`); a shell that dies of it is no orphan.
	signal.Ignore(syscall.SIGHUP)
	var masters []*os.File // kept open: the PTY master the gateway holds
	for _, c := range spec.Children {
		if c.Lifetime == 0 {
			c.Lifetime = spec.Lifetime
		}
		if m, err := startHelper(c); err != nil {
			fmt.Fprintln(os.Stderr, "helper start:", err)
			os.Exit(2)
		} else if m != nil {
			masters = append(masters, m)
			go io.Copy(io.Discard, m) // a gateway reads its PTYs' output
		}
	}
	// Register only once every child is registered: the test waits for the
	// full count, so it then knows every pid. Children are never waited for:
	// a dead helper stays a zombie, its pid not reusable, until its parent
	// dies and the test (the subreaper) reaps it.
	if err := register(os.Getenv(envPIDDir)); err != nil {
		fmt.Fprintln(os.Stderr, "helper register:", err)
		os.Exit(2)
	}
	if spec.Busy {
		go func() {
			for i := 0; ; i++ {
				fmt.Printf("working %d\n", i)
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	lifetime := helperLifetime
	if spec.Lifetime > 0 {
		lifetime = spec.Lifetime
	}
	time.Sleep(lifetime)
	_ = masters
	os.Exit(0)
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

// startHelper starts the helper c describes, returning the PTY master when
// it runs on one.
func startHelper(c spawnSpec) (*os.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	childSpec, err := json.Marshal(spawnSpec{Children: c.Children, Busy: c.Busy, Lifetime: c.Lifetime})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Args = c.Args
	cmd.Env = append(append(os.Environ(), c.Env...), envSpec+"="+string(childSpec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: c.Setsid, Setpgid: c.Setpgid && !c.Setsid}
	var master *os.File
	if c.PTY {
		m, slave, err := openPTY()
		if err != nil {
			return nil, err
		}
		defer slave.Close()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		master = m
	}
	return master, cmd.Start()
}

// openPTY opens a new pseudo-terminal pair (pty(7)): /dev/ptmx gives the
// master, unlockpt and TIOCGPTN name the slave /dev/pts/N. The master is
// used through its raw conn, never Fd: Fd puts a file in blocking mode, and
// then Close waits for a pending Read, so a terminal closed while the
// client on it wrote nothing stayed open (no hang-up) until it did.
func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	raw, err := m.SyscallConn()
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	n := -1
	var ioErr error
	if err := raw.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr != nil {
			ioErr = fmt.Errorf("unlockpt: %w", ioErr)
			return
		}
		if n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN); ioErr != nil {
			ioErr = fmt.Errorf("ptsname: %w", ioErr)
		}
	}); err != nil || ioErr != nil {
		m.Close()
		return nil, nil, errors.Join(err, ioErr)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

// register writes PID:STARTTICKS into dir, so the test learns every helper
// and can prove, before it signals one, that the pid is still that helper.
func register(dir string) error {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	var p platform.Process
	if err := platform.ParseStat(b, 4096, &p); err != nil {
		return err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%d", p.PID))
	if err := os.WriteFile(tmp, []byte(strconv.FormatUint(p.StartTicks, 10)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, strconv.Itoa(p.PID)))
}

// requireRoot skips a test that needs root, saying so.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skips.Skip(t, "needs root: run the tests as root (CI does) to exercise this")
	}
}

// urlMarkedSetup is the setup of a test whose reaper runs as another user
// and can't read the env mark: an orphaned MCP-shaped tree whose argv
// carries a URL with the suite's mark and name, a directory other users
// can reach (mode), and in it a policy (defaults, then one rule of the
// given lines) whose rule matches reparented trees of that URL only.
func urlMarkedSetup(t *testing.T, name string, mode os.FileMode, defaults, rule string) (pid int, dir, pol string) {
	t.Helper()
	url := "https://" + name + "-" + suiteMark + ".test"
	pid = adopt(t, "npm exec mcp-remote "+url, "sleep 60; exit 0", nil)
	dir = sharedDir(t, mode)
	pol = filepath.Join(dir, "policy.toml")
	text := fmt.Sprintf("version = 1\n%s%s\n[[rule]]\nwhen = [\"reparented\"]\ncmdline = '%s'\n%s", defaults, selfSubreaper(t), regexp.QuoteMeta(url), rule)
	if err := os.WriteFile(pol, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return pid, dir, pol
}

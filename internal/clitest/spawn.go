//go:build linux

package clitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"golang.org/x/sys/unix"
)

// SpawnSpec describes a helper process: the argv it shows (Args), the
// environment it adds, how it is detached, and the children it starts.
// Helpers are this test binary re-executed with REAPER_TEST_SPEC set, so a
// "claude-agent-acp" or "npm exec" of the tests is a real process with that
// command line and no dependency on the real programs.
type SpawnSpec struct {
	Args    []string
	Env     []string
	Setsid  bool // its own session (node's detached: true)
	Setpgid bool // its own process group
	PTY     bool // a session leader with a new pseudo-terminal as stdio
	Busy    bool // keeps working: writes a line to its stdout every 20 ms
	// Lifetime, when set, replaces helperLifetime for it and its children.
	Lifetime time.Duration
	Children []SpawnSpec
}

const (
	EnvSpec   = "REAPER_TEST_SPEC"
	EnvPIDDir = "REAPER_TEST_PIDDIR"
	// HelperLifetime bounds every helper: a test that fails before its
	// cleanup runs cannot leave them behind for long (systemd's oomd tests
	// do the same).
	HelperLifetime = 3 * time.Minute
)

// StartHelper starts the helper c describes, returning the PTY master when
// it runs on one.
func StartHelper(c SpawnSpec) (*os.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	childSpec, err := json.Marshal(SpawnSpec{Children: c.Children, Busy: c.Busy, Lifetime: c.Lifetime})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Args = c.Args
	cmd.Env = append(append(os.Environ(), c.Env...), EnvSpec+"="+string(childSpec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: c.Setsid, Setpgid: c.Setpgid && !c.Setsid}
	var master *os.File
	if c.PTY {
		m, slave, err := OpenPTY()
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

// OpenPTY opens a new pseudo-terminal pair (pty(7)): /dev/ptmx gives the
// master, unlockpt and TIOCGPTN name the slave /dev/pts/N. The master is
// used through its raw conn, never Fd: Fd puts a file in blocking mode, and
// then Close waits for a pending Read, so a terminal closed while the
// client on it wrote nothing stayed open (no hang-up) until it did.
func OpenPTY() (master, slave *os.File, err error) {
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

// Register writes PID:STARTTICKS into dir, so the test learns every helper
// and can prove, before it signals one, that the pid is still that helper.
func Register(dir string) error {
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

// RunSpecIfAsked turns this process into the helper EnvSpec describes
// when the environment names one, and never returns then: it starts the
// spec's children, registers itself in EnvPIDDir once they are, and lives
// for its lifetime.
func RunSpecIfAsked() {
	raw := os.Getenv(EnvSpec)
	if raw == "" {
		return
	}
	var spec SpawnSpec
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
		if m, err := StartHelper(c); err != nil {
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
	if err := Register(os.Getenv(EnvPIDDir)); err != nil {
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
	lifetime := HelperLifetime
	if spec.Lifetime > 0 {
		lifetime = spec.Lifetime
	}
	time.Sleep(lifetime)
	_ = masters
	os.Exit(0)
}

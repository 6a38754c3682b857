package host

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Init is how RunInit runs its command: as a container's init (PID 1) or
// any subreaper runs one.
type Init struct {
	// Group puts the command in a process group of its own and sends the
	// relayed signals to that group (tini's -g); on a terminal, the group
	// is made its foreground, and given back after.
	Group bool
	// Reaped is told each adopted child this process reaped (not the
	// command), with its status.
	Reaped func(pid int)
}

// Relayed are the signals RunInit passes to the command: what container
// runtimes and terminals send (docker stop's TERM, docker kill -s …,
// Kubernetes' TERM, a window's resize).
var Relayed = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// terminalSent are the signals a terminal sends to its foreground process
// group by itself: with the command in that group they reach it already,
// and are relayed only where no terminal sent them.
var terminalSent = map[os.Signal]bool{syscall.SIGINT: true, syscall.SIGQUIT: true, syscall.SIGWINCH: true}

func runInit(argv []string, opts Init, started func(pid int)) (int, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	fg := onForeground()
	tty := -1
	if opts.Group {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if fg {
			tty = int(os.Stdin.Fd())
			c.SysProcAttr.Foreground, c.SysProcAttr.Ctty = true, tty
		}
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, Relayed...)
	defer signal.Stop(sigs)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)

	kick := make(chan struct{}, 1)
	own.Lock() // held while the command starts and while zombies are reaped
	if err := c.Start(); err != nil {
		own.Unlock()
		return 0, startError(argv[0], err)
	}
	pid := c.Process.Pid
	c.Process.Release() // waited for below, never by os/exec
	own.kick = kick
	own.Unlock()
	defer func() {
		own.Lock()
		own.kick = nil
		own.Unlock()
	}()
	if started != nil {
		started(pid)
	}
	if opts.Group && tty >= 0 {
		defer takeForeground(tty)
	}

	done := make(chan syscall.WaitStatus, 1)
	reap := func() {
		own.Lock()
		defer own.Unlock()
		for {
			got, err := exited()
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if got <= 0 || err != nil || own.pids[got] {
				return // none, or an own child's: its waiter takes it, and kicks
			}
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(got, &ws, syscall.WNOHANG, nil); err != nil && !errors.Is(err, syscall.EINTR) {
				return
			}
			if got == pid {
				done <- ws
				continue
			}
			if opts.Reaped != nil {
				opts.Reaped(got)
			}
		}
	}
	reap() // what exited before the handler was in place
	for {
		select {
		case ws := <-done:
			reap() // what exited with it
			if ws.Signaled() {
				return 128 + int(ws.Signal()), nil
			}
			return ws.ExitStatus(), nil
		case <-chld:
			reap()
		case <-kick:
			reap()
		case s := <-sigs:
			if terminalSent[s] && fg && !opts.Group {
				continue // the terminal sent it to the command's group, which is ours
			}
			target := pid
			if opts.Group {
				target = -pid
			}
			syscall.Kill(target, s.(syscall.Signal))
		}
	}
}

// exited is the pid of an exited child of this process, left to be
// waited for (waitid(P_ALL, WEXITED|WNOHANG|WNOWAIT)), or 0 for none.
func exited() (int, error) {
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil {
		return 0, err
	}
	return siginfoPID(&info), nil
}

// siginfoPID is si_pid of a waitid's siginfo_t: the first field of the
// union after si_signo, si_errno and si_code, which is aligned as a
// pointer is (offset 16 on 64-bit targets, 12 on 32-bit ones; sigaction(2),
// include/uapi/asm-generic/siginfo.h). No exited child: si_pid 0.
func siginfoPID(info *unix.Siginfo) int {
	off := 3 * unsafe.Sizeof(int32(0))
	if a := unsafe.Alignof(uintptr(0)); off%a != 0 {
		off += a - off%a
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}

// startError is the command's start failure: not found, or not
// executable.
func startError(name string, err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return &NotStartedError{ee, errors.Is(ee.Err, exec.ErrNotFound) || errors.Is(ee.Err, os.ErrNotExist)}
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &NotStartedError{pe, errors.Is(pe.Err, os.ErrNotExist)}
	}
	return err
}

// onForeground reports whether this process is in the foreground process
// group of the terminal on its stdin: then the terminal's own signals
// (Ctrl-C, Ctrl-\, a resize) reach the command too.
func onForeground() bool {
	pgrp, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == syscall.Getpgrp()
}

// takeForeground makes this process's group the terminal's foreground
// again, SIGTTOU held off (a background group that sets it gets one).
func takeForeground(tty int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(tty, unix.TIOCSPGRP, syscall.Getpgrp())
}

func endNamespace(grace time.Duration) (reaped int, killed bool, err error) {
	if os.Getpid() != 1 {
		return 0, false, errors.New("not a PID namespace's init: kill(-1) would reach the host's processes")
	}
	DrainZombies() // what the reap ended: not left
	if err := syscall.Kill(-1, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return 0, false, nil // nothing left
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		reaped += DrainZombies()
		if syscall.Kill(-1, 0) == syscall.ESRCH {
			return reaped, false, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-1, syscall.SIGKILL)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		reaped += DrainZombies()
		if syscall.Kill(-1, 0) == syscall.ESRCH {
			break
		}
	}
	return reaped, true, nil
}

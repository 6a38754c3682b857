//go:build unix

package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func runCommand(argv []string, started func(pid int)) (int, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Caught, not ignored: an ignored signal stays ignored across exec, and
	// CMD must get the terminal's Ctrl-C as if run directly (the terminal
	// sends it to the whole foreground group, CMD included).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	if err := c.Start(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return 0, &NotStartedError{fmt.Errorf("run %s: %w", argv[0], ee.Err), errors.Is(ee.Err, exec.ErrNotFound) || errors.Is(ee.Err, fs.ErrNotExist)}
		}
		// A path that is not there or not executable: the exec failed.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return 0, &NotStartedError{fmt.Errorf("run %s: %w", argv[0], pe.Err), errors.Is(pe.Err, fs.ErrNotExist)}
		}
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	if started != nil {
		started(c.Process.Pid)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				// The terminal's signals reach CMD already (its group);
				// one sent to run alone is passed on.
				if s != syscall.SIGINT && s != syscall.SIGQUIT {
					c.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := c.Wait()
	close(done)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

func drainZombies() int {
	n := 0
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if got <= 0 || err != nil {
			return n
		}
		n++
	}
}

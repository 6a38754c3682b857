package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// lockPath is the one-reaper-at-a-time lock of this host and user: in
// /run for root, in $XDG_RUNTIME_DIR otherwise, else in the temp dir.
func lockPath() string {
	if euid() == 0 {
		return "/run/reaper.lock"
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "reaper.lock")
	}
	return filepath.Join(os.TempDir(), "reaper-"+strconv.Itoa(int(euid()))+".lock")
}

// lockError says another reaper holds the lock.
type lockError struct {
	path string
	wait time.Duration
}

func (e *lockError) Error() string {
	return fmt.Sprintf("another reaper holds %s; gave up after waiting %s (SPEC §9.8: one reaper at a time)", e.path, e.wait)
}

// acquireLock takes an exclusive flock(2) on path, waiting up to wait. The
// lock goes with the process: a reaper that dies releases it. It returns
// the release function.
func acquireLock(path string, wait time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, &lockError{path: path, wait: wait}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

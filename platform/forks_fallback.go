//go:build !linux

package platform

import (
	"errors"
	"time"
)

// Forks are Linux's alone (the proc connector).
type Forks struct{}

var errNoForks = errors.New("fork events are read on Linux only")

func openForks() (*Forks, error) { return nil, errNoForks }

func (f *Forks) wait(time.Duration) (bool, error) { return false, errNoForks }

func (f *Forks) drain([]byte, func(parent, child int)) error { return errNoForks }

func (f *Forks) close() error { return nil }

// LastPID is Linux's alone.
type LastPID struct{}

func openLastPID() (*LastPID, error) { return nil, errNoForks }

func (*LastPID) read() (int, error) { return 0, errNoForks }

func (*LastPID) close() error { return nil }

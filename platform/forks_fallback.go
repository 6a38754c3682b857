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

// Wait is Linux's alone.
func (f *Forks) Wait(time.Duration) (bool, error) { return false, errNoForks }

// Drain is Linux's alone.
func (f *Forks) Drain([]byte, func(parent, child int)) error { return errNoForks }

// Close is Linux's alone.
func (f *Forks) Close() error { return nil }

// LastPID is Linux's alone.
type LastPID struct{}

func openLastPID() (*LastPID, error) { return nil, errNoForks }

// Read is Linux's alone.
func (*LastPID) Read() (int, error) { return 0, errNoForks }

// Close is Linux's alone.
func (*LastPID) Close() error { return nil }

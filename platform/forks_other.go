//go:build !linux

package platform

import "errors"

// Forks are Linux's alone (the proc connector).
type Forks struct{}

var errNoForks = errors.New("fork events are read on Linux only")

// OpenForks is Linux's alone.
func OpenForks() (*Forks, error) { return nil, errNoForks }

// Read is Linux's alone.
func (f *Forks) Read([]byte, func(parent, child int)) error { return errNoForks }

// Close is Linux's alone.
func (f *Forks) Close() error { return nil }

// ForkCount is Linux's alone.
func ForkCount() (uint64, error) { return 0, errNoForks }

// Overrun is Linux's alone.
func Overrun(error) bool { return false }

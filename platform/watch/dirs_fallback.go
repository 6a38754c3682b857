//go:build !linux && !darwin

package watch

import (
	"errors"
	"fmt"
	"runtime"
)

// Dirs is not implemented on this platform (kqueue's EVFILT_VNODE needs an
// open fd per directory, which a root watch of every account's state
// would hold): NewDirs fails, and the caller's backstop covers the dirs.
type Dirs struct{}

func newDirs() (*Dirs, error) {
	return nil, fmt.Errorf("watching directories on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// C is never sent on.
func (d *Dirs) C() <-chan Dir { return nil }

// Len is 0.
func (d *Dirs) Len() int { return 0 }

// Set watches nothing: every dir fails.
func (d *Dirs) Set(dirs []Dir) int { return len(dirs) }

// Close does nothing.
func (d *Dirs) Close() error { return nil }

func dirsMechanism() string { return "" }

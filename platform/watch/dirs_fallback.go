//go:build !linux && !darwin && !windows

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

func (d *Dirs) len() int { return 0 }

func (d *Dirs) set(dirs []Dir) int { return len(dirs) }

func (d *Dirs) closeOS() error { return nil }

func dirsMechanism() string { return "" }

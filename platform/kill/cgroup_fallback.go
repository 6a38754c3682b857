//go:build !linux && !windows

package kill

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

func (h *Handle) cgroup() (string, error) {
	return "", fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (g *Guard) killCgroup(path string, members []*Handle) ([]Target, error) {
	return nil, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func cgroup2Root() string { return "" }

func cgroupPopulated(path string) (bool, error) {
	return false, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Confinement: there are no cgroups on this platform.
type Confinement struct {
	Path   string
	Moving func(pid int, start uint64, from string)
}

func (g *Guard) confine(name string) (*Confinement, error) {
	return nil, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (c *Confinement) move(h *Handle) error {
	return fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (c *Confinement) movedOS(pid int) bool { return false }

func (c *Confinement) kill() ([]Target, error) {
	return nil, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func (c *Confinement) populated() bool { return false }

func (c *Confinement) procs() []int { return nil }

func (c *Confinement) remove() bool { return true }

func (c *Confinement) release() error { return nil }

func (g *Guard) reconfined(path string, from map[int]string, first string) (*Confinement, error) {
	return nil, fmt.Errorf("cgroups: %w", errors.ErrUnsupported)
}

// ConfinementLeft: there are no cgroups on this platform.
type ConfinementLeft struct {
	Path      string
	Made      time.Time
	Populated bool
}

func sweepConfinementsOS(time.Time) []string { return nil }

func confinements(time.Time) ([]ConfinementLeft, error) {
	return nil, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// No confinement here: the names are Linux's, for the records' shape.
const (
	unitKill = "cgroup.kill"
	unitName = "cgroup"
)

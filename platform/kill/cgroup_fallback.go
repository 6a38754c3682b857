//go:build !linux

package kill

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Cgroup: there are no cgroups on this platform.
func (h *Handle) Cgroup() (string, error) {
	return "", fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// KillCgroup: there are no cgroups on this platform.
func (g *Guard) KillCgroup(path string, members []*Handle) ([]Target, error) {
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

// Confine: there are no cgroups on this platform; the reaper follows the
// dying tree's sessions and process groups instead.
func (g *Guard) Confine(name string) (*Confinement, error) {
	return nil, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Move: there are no cgroups on this platform.
func (c *Confinement) Move(h *Handle) error {
	return fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Moved: nothing is ever moved here.
func (c *Confinement) Moved(pid int) bool { return false }

// Kill: there are no cgroups on this platform.
func (c *Confinement) Kill() ([]Target, error) {
	return nil, fmt.Errorf("cgroups on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Populated: nothing is ever in one here.
func (c *Confinement) Populated() bool { return false }

// Procs: nothing is ever in one here.
func (c *Confinement) Procs() []int { return nil }

// Remove: there is nothing to remove here.
func (c *Confinement) Remove() bool { return true }

// Release: there is nothing to release here.
func (c *Confinement) Release() error { return nil }

// Reconfined is not implemented on this platform.
func (g *Guard) Reconfined(path string, from map[int]string, first string) (*Confinement, error) {
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

//go:build !linux && !darwin && !windows

package watch

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Settle: no hint comes here.
const Settle = 0 * time.Millisecond

// Exits is not implemented on this platform: New fails, and the caller
// polls.
type Exits struct{}

func newWatch() (*Exits, error) {
	return nil, fmt.Errorf("watching exits on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// C is never sent on.
func (e *Exits) C() <-chan Target { return nil }

func (e *Exits) len() int { return 0 }

func (e *Exits) setOS(targets []Target) int { return len(targets) }

func (e *Exits) closeOS() error { return nil }

// Lost is false: nothing is sent, so nothing is lost.
func (e *Exits) Lost() bool { return false }

func exitsMechanism() string { return "" }

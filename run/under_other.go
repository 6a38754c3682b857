//go:build !linux

package run

import (
	"context"
	"errors"
	"fmt"
)

// Under is Linux's alone: elsewhere reaper run adopts nothing.
func Under(_ *Config, pid int) error {
	return fmt.Errorf("--under %d: %w", pid, errors.ErrUnsupported)
}

// Adoptions never tells: nothing is adopted here.
func Adoptions(context.Context, int, <-chan struct{}, <-chan struct{}) <-chan struct{} { return nil }

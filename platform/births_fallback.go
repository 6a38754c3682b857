//go:build !linux

package platform

import (
	"errors"
	"fmt"
	"time"
)

func newBirths() (*Births, error) {
	return nil, fmt.Errorf("births: %w", errors.ErrUnsupported)
}

func (b *Births) look(time.Duration, int) ([]Birth, int, error) {
	return nil, 0, fmt.Errorf("births: %w", errors.ErrUnsupported)
}

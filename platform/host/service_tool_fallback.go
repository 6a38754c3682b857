//go:build !unix && !windows

package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

func runTool(ctx context.Context, name string, args ...string) (string, error) {
	return "", fmt.Errorf("%s on %s: %w", name, runtime.GOOS, errors.ErrUnsupported)
}

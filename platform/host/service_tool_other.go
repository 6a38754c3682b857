//go:build !unix

package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// RunTool: no systemctl or launchctl here.
func RunTool(ctx context.Context, name string, args ...string) (string, error) {
	return "", fmt.Errorf("%s on %s: %w", name, runtime.GOOS, errors.ErrUnsupported)
}

//go:build unix && !linux

package platform

import "golang.org/x/sys/unix"

// pathOnly: no O_PATH here; a directory is opened to read.
const pathOnly = unix.O_RDONLY

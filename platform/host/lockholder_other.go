//go:build !linux

package host

import "os"

// LockHolder is not known here: macOS and the BSDs list no flock holders.
func LockHolder(*os.File) (int, string) { return 0, "" }

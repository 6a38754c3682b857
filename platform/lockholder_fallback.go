//go:build !linux

package platform

import "os"

// lockHolder is not known here: macOS and the BSDs list no flock holders.
func lockHolder(*os.File) (int, string) { return 0, "" }

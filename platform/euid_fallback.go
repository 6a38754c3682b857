//go:build !windows

package platform

import "os"

func euid() uint32 { return uint32(os.Geteuid()) }

//go:build !linux && !darwin && !freebsd

package platform

import "os"

func isTerminal(f *os.File) bool { return false }

func termWidth(f *os.File) int { return 0 }

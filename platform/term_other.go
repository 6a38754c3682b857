//go:build !linux && !darwin && !freebsd

package platform

import "os"

// IsTerminal: not known on this platform; no.
func IsTerminal(f *os.File) bool { return false }

// TermWidth: not known on this platform; 0.
func TermWidth(f *os.File) int { return 0 }

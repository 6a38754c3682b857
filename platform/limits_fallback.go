//go:build !linux && !darwin

package platform

// ProcessLimit is not read on this platform.
func (s *Snapshot) ProcessLimit(*Process) uint64 { return 0 }

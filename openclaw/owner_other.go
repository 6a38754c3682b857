//go:build !unix

package openclaw

// ownerUID is unknown where files have no unix owner.
func ownerUID(path string) (int, bool) { return 0, false }

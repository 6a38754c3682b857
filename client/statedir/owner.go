package statedir

import "github.com/orphanreaper/reaper/platform"

// dirID is a directory's identity and owner.
type dirID = platform.FileID

// statDir returns the identity and owner of the directory at path.
func statDir(path string) (dirID, bool) { return platform.StatID(path) }

// OwnerUID returns the uid owning path: a state dir's user.
func OwnerUID(path string) (int, bool) {
	id, ok := platform.StatID(path)
	return id.UID, ok
}

//go:build !unix

package statedir

// OwnerUID is unknown where files have no unix owner.
func OwnerUID(path string) (int, bool) { return 0, false }

// dirID is a directory's identity and owner: unknown here.
type dirID struct{ uid int }

// statDir is unknown where files have no unix owner.
func statDir(path string) (dirID, bool) { return dirID{}, false }

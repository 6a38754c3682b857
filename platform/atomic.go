package platform

import "os"

// WriteFileAtomic replaces path with data: a temporary file in the same
// directory (so the rename cannot cross filesystems), fsync, rename over
// path, then fsync of the directory so the rename itself survives a crash.
// A reader sees the old content or the new, never a mix. The directory
// is reached without a link another user could plant (on Unix: openDir's
// rule), so that a user's link in the directory part cannot make reaper
// write a file of its own where that user chose.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm)
}

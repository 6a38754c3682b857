//go:build unix

package platform

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir, err := openDir(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer unix.Close(dir)
	base := filepath.Base(path)
	var tmp string
	var fd int
	for range 8 {
		var r [6]byte
		rand.Read(r[:])
		tmp = "." + base + "." + hex.EncodeToString(r[:]) + ".tmp"
		fd, err = openCreate(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(filepath.Dir(path), tmp))
	defer unix.Unlinkat(dir, tmp, 0) // finds nothing after a successful rename
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, base)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

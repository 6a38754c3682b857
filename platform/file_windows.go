package platform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The file functions on Windows. What Unix guards with O_NONBLOCK and
// O_NOFOLLOW is guarded here by what a path can be: no FIFO lives in a
// file system (named pipes are \\.\pipe\'s alone), and a link is a
// reparse point, refused wherever Unix refuses a symbolic link (every
// component below the directory a state is read beneath, and the dir
// itself). A file's owner is its security descriptor's owner SID, as a
// relative id (ownerRID's uid): the owner of the token that made it.

func unsupported(what string) error {
	return fmt.Errorf("%s on windows: %w", what, errors.ErrUnsupported)
}

func readFile(path string, max int64) ([]byte, error) {
	b, _, err := readFileOwner(path, max)
	return b, err
}

func readFileOwner(path string, max int64) ([]byte, uint32, error) {
	f, err := openShared(path, false)
	if err != nil {
		return nil, 0, &FileError{path, err}
	}
	defer f.Close()
	b, err := readRegularFile(f, max)
	if err != nil {
		return nil, 0, &FileError{path, err}
	}
	return b, handleOwner(f), nil
}

// readRegularFile reads f whole, if it is a regular file within max bytes.
func readRegularFile(f *os.File, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > max {
		return nil, capError(max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, capError(max)
	}
	return b, nil
}

// openShared opens path for reading as a reader that is in no one's way:
// with every share mode, FILE_SHARE_DELETE too, which os.Open leaves out,
// so that a client may delete its file (SQLite's WAL at its close) while
// reaper holds it open, as on Unix. With noFollow a final reparse point
// is opened itself (FILE_FLAG_OPEN_REPARSE_POINT) and refused from the
// handle, as O_NOFOLLOW refuses a link: the last component is judged by
// what was opened, with no race between a check and the open.
func openShared(path string, noFollow bool) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	var flags uint32 = windows.FILE_ATTRIBUTE_NORMAL
	if noFollow {
		flags |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if noFollow {
		var fi windows.ByHandleFileInformation
		if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
			windows.CloseHandle(h)
			return nil, err
		}
		if fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
			windows.CloseHandle(h)
			return nil, ErrSymlink
		}
	}
	return os.NewFile(uintptr(h), path), nil
}

// handleOwner is the owner of the open file, NoUID where its security
// descriptor cannot be read.
func handleOwner(f *os.File) uint32 {
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return NoUID
	}
	sid, _, err := sd.Owner()
	if err != nil {
		return NoUID
	}
	return sidRID(sid)
}

// pathOwner is the owner of the file or directory at path, its reparse
// point's own if it is one.
func pathOwner(path string) (uint32, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return NoUID, err
	}
	sid, _, err := sd.Owner()
	if err != nil {
		return NoUID, err
	}
	return sidRID(sid), nil
}

// noLinks refuses a path below dir (dir included) of which a component is
// a reparse point: a symbolic link, a junction, a mount point.
func noLinks(dir, rel string) error {
	p := dir
	parts := []string{""}
	if rel != "" {
		parts = append(parts, strings.Split(filepath.ToSlash(rel), "/")...)
	}
	for _, part := range parts {
		if part != "" {
			if part == ".." {
				return fmt.Errorf("%s: %w", rel, ErrSymlink)
			}
			p = filepath.Join(p, part)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 || fi.Mode()&os.ModeIrregular != 0 {
			return ErrSymlink
		}
	}
	return nil
}

func readBeneath(dir, rel string, max int64, owner int) ([]byte, error) {
	f, err := openBeneathOS(dir, rel, owner)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readRegularFile(f, max)
	if err != nil {
		return nil, &FileError{filepath.Join(dir, rel), err}
	}
	return b, nil
}

func openBeneathOS(dir, rel string, owner int) (*os.File, error) {
	path := filepath.Join(dir, rel)
	if err := noLinks(dir, rel); err != nil {
		return nil, &FileError{path, err}
	}
	f, err := openShared(path, true)
	if err != nil {
		return nil, &FileError{path, err}
	}
	if owner != AnyOwner {
		if got := handleOwner(f); got != uint32(owner) {
			f.Close()
			return nil, &FileError{path, fmt.Errorf("%w: owned by uid %d, the state is uid %d's", ErrNotOwner, got, owner)}
		}
	}
	return f, nil
}

// fileBasicInfo is FILE_BASIC_INFO (winbase.h), which x/sys does not
// declare: the times are FILETIMEs.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// stamp: NTFS keeps a change time as Unix does (FILE_BASIC_INFO's
// ChangeTime, moved by a write, a rename or an attribute's change), read
// from the handle.
func stamp(f *os.File) (FileStamp, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileStamp{}, err
	}
	var bi fileBasicInfo
	if err := windows.GetFileInformationByHandleEx(windows.Handle(f.Fd()), windows.FileBasicInfo, (*byte)(unsafe.Pointer(&bi)), uint32(unsafe.Sizeof(bi))); err != nil {
		return FileStamp{}, err
	}
	return FileStamp{Size: fi.Size(), Mtime: bi.LastWriteTime, Ctime: bi.ChangeTime}, nil
}

func dirOwner(path string) (int, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return -1, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return -1, &FileError{path, ErrSymlink}
	}
	if !fi.IsDir() {
		return -1, fmt.Errorf("%s: not a directory", path)
	}
	uid, err := pathOwner(path)
	if err != nil {
		return -1, &FileError{path, err}
	}
	return int(uid), nil
}

func dirOwnerNoLinks(path string) (uint32, error) {
	if !filepath.IsAbs(path) {
		return 0, fmt.Errorf("%s: not an absolute path", path)
	}
	if err := noLinks(filepath.VolumeName(path)+`\`, strings.TrimPrefix(path, filepath.VolumeName(path)+`\`)); err != nil {
		return 0, &FileError{path, err}
	}
	if fi, err := os.Lstat(path); err != nil {
		return 0, &FileError{path, err}
	} else if !fi.IsDir() {
		return 0, fmt.Errorf("%s: not a directory", path)
	}
	uid, err := pathOwner(path)
	if err != nil {
		return 0, &FileError{path, err}
	}
	return uid, nil
}

// openDirNoLinks gives a Unix directory descriptor, which Windows has not:
// the readers beneath a directory go by path and noLinks here.
func openDirNoLinks(path string, owner int) (int, error) {
	return -1, unsupported("a directory descriptor")
}

// writable tries what Unix asks access(2): a file made and removed at once.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".reaper-writable-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

func openDirOS(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, &FileError{path, err}
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, &FileError{path, ErrSymlink}
	}
	if !fi.IsDir() {
		return nil, &FileError{path, fmt.Errorf("not a directory")}
	}
	return os.Open(path)
}

func dirNames(path string, n int) ([]string, error) {
	d, err := openDirOS(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(n)
	if err == io.EOF {
		err = nil
	}
	return names, err
}

func whoCanReplace(path string) (string, error) {
	return "", unsupported("who can replace a file (its ACL)")
}

func isExecutable(path string, fi os.FileInfo) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".exe", ".com", ".bat", ".cmd":
		return fi.Mode().IsRegular()
	}
	return false
}

func fileUID(path string, _ os.FileInfo) (uint32, bool) {
	uid, err := pathOwner(path)
	return uid, err == nil && uid != NoUID
}

func fileOwner(fi os.FileInfo) (uid, gid uint32, ok bool) { return 0, 0, false }

func kernel() string {
	v := windows.RtlGetVersion()
	return fmt.Sprintf("windows %d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
}

// openOwn opens one of reaper's own files: no reparse point at the path,
// a regular file with one link, owned by this reaper's user.
func openOwn(path string, how OwnOpen) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, &FileError{path, fmt.Errorf("%w: %w", ErrNotOwn, ErrSymlink)}
	}
	var f *os.File
	var err error
	switch how {
	case OwnRead:
		f, err = os.Open(path)
	default:
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	}
	if err != nil {
		return nil, &FileError{path, err}
	}
	if err := checkOwnFile(f); err != nil {
		f.Close()
		return nil, &FileError{path, err}
	}
	return f, nil
}

// checkOwnFile: a regular file of one link whose owner is this reaper's.
func checkOwnFile(f *os.File) error {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return err
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		return fmt.Errorf("%w: a directory", ErrNotOwn)
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		return fmt.Errorf("%w: %w", ErrNotOwn, ErrSymlink)
	case info.NumberOfLinks != 1:
		return fmt.Errorf("%w: %d links", ErrNotOwn, info.NumberOfLinks)
	}
	if owner := handleOwner(f); owner != EUID() {
		return fmt.Errorf("%w: owned by uid %d, not this reaper's uid %d", ErrNotOwn, owner, EUID())
	}
	return nil
}

func readOwn(path string, max int64) ([]byte, error) {
	f, err := openOwn(path, OwnRead)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readRegularFile(f, max)
	if err != nil {
		return nil, &FileError{path, err}
	}
	return b, nil
}

// tryLock takes an exclusive lock on the whole file without waiting
// (LockFileEx): Windows' flock(LOCK_EX|LOCK_NB). It ends with the handle.
func tryLock(f *os.File) (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}

// writeOwn writes one of reaper's own files: made new beside it and moved
// over it (the checks of openOwn on what was there).
func writeOwn(path string, data []byte, perm os.FileMode) error {
	if f, err := openOwn(path, OwnRead); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return writeFileAtomic(path, data, perm)
}

func pathSpeaker(path string) (uid, gid uint32, err error) {
	uid, err = pathOwner(path)
	return uid, NoUID, err
}

// readOnlyFS reports a write refused by a read-only volume.
func readOnlyFS(err error) bool { return errors.Is(err, windows.ERROR_WRITE_PROTECT) }

func statID(path string) (FileID, bool) {
	f, err := os.Open(path)
	if err != nil {
		return FileID{}, false
	}
	defer f.Close()
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return FileID{}, false
	}
	return FileID{Dev: uint64(info.VolumeSerialNumber), Ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow), UID: int(handleOwner(f))}, true
}

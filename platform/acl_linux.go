package platform

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// POSIX access ACLs as Linux stores them, in the system.posix_acl_access
// extended attribute (include/uapi/linux/posix_acl_xattr.h): a 4-byte
// little-endian header of version 2, then 8-byte entries of tag (u16),
// permissions (u16) and id (u32). With an ACL, the mode's group bits are
// the ACL's mask (acl(5)), so mode bits alone miss a "u:alice:rwx" entry
// on a directory that reads drwxrwxr-x root:root.
const (
	aclVersion   = 2
	aclUser      = 0x02
	aclGroup     = 0x08
	aclPermWrite = 0x02
)

// aclWriter says which user or group other than root an access ACL on
// path grants write to ("" when none, or when the file has no ACL). The
// mask is not taken to narrow it: an entry that asks for write is refused
// whatever the mask says now, since the owner may widen the mask at will.
// The link itself is read, not followed.
func aclWriter(path string) (string, error) {
	buf := make([]byte, 1024)
	for {
		n, err := unix.Lgetxattr(path, "system.posix_acl_access", buf)
		switch {
		case errors.Is(err, unix.ENODATA), errors.Is(err, unix.ENOTSUP):
			return "", nil
		case errors.Is(err, unix.ERANGE) && len(buf) < 1<<20:
			buf = make([]byte, len(buf)*4)
			continue
		case err != nil:
			return "", &FileError{path, err}
		}
		return parseACLWriter(buf[:n])
	}
}

// parseACLWriter reads an ACL xattr value and names the first user or
// group other than root that an entry grants write.
func parseACLWriter(b []byte) (string, error) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != aclVersion || (len(b)-4)%8 != 0 {
		return "", errors.New("an ACL this reaper cannot read")
	}
	for e := b[4:]; len(e) >= 8; e = e[8:] {
		tag, perm, id := binary.LittleEndian.Uint16(e), binary.LittleEndian.Uint16(e[2:]), binary.LittleEndian.Uint32(e[4:])
		if perm&aclPermWrite == 0 || id == 0 {
			continue
		}
		switch tag {
		case aclUser:
			return fmt.Sprintf("an ACL grants uid %d write", id), nil
		case aclGroup:
			return fmt.Sprintf("an ACL grants group %d write", id), nil
		}
	}
	return "", nil
}

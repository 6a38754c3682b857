package platform

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// aclXattr is a system.posix_acl_access value: user::rwx, the entries
// given (tag, perm, id), group::r-x, mask::rwx, other::r-x.
func aclXattr(entries ...[3]uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, aclVersion)
	add := func(tag, perm, id uint32) {
		b = binary.LittleEndian.AppendUint16(b, uint16(tag))
		b = binary.LittleEndian.AppendUint16(b, uint16(perm))
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	add(0x01, 7, 0xffffffff)
	for _, e := range entries {
		add(e[0], e[1], e[2])
	}
	add(0x04, 5, 0xffffffff)
	add(0x10, 7, 0xffffffff)
	add(0x20, 5, 0xffffffff)
	return b
}

func TestParseACLWriter(t *testing.T) {
	for _, tt := range []struct {
		name string
		b    []byte
		want string
	}{
		{"no named entry", aclXattr(), ""},
		{"a user with write", aclXattr([3]uint32{aclUser, 7, 1000}), "uid 1000 write"},
		{"a group with write", aclXattr([3]uint32{aclGroup, 6, 27}), "group 27 write"},
		{"a user who reads", aclXattr([3]uint32{aclUser, 5, 1000}), ""},
		{"root named", aclXattr([3]uint32{aclUser, 7, 0}), ""},
	} {
		if got, err := parseACLWriter(tt.b); err != nil || !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range [][]byte{nil, {1, 0, 0, 0}, aclXattr()[:9]} {
		if _, err := parseACLWriter(bad); err == nil {
			t.Errorf("%x: read", bad)
		}
	}
}

// Issue 51, attack 4: a root directory 0755 with the ACL entry u:A:rwx
// reads drwxrwxr-x root:root, and A can rename a file of theirs over the
// binary in it; the same ACL on the binary lets A rewrite it in place.
// Both are refused; the control, a plain root 0755 install, is taken.
func TestWhoCanReplaceACL(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a root-owned install to put an ACL on")
	}
	for _, on := range []string{"dir", "file"} {
		dir := filepath.Join(t.TempDir(), "bin")
		os.Mkdir(dir, 0o755)
		exe := filepath.Join(dir, "reaper")
		os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
		if why, err := WhoCanReplace(exe); err != nil || why != "" {
			t.Fatalf("control, a plain root install: %q, %v", why, err)
		}
		target := dir
		if on == "file" {
			target = exe
		}
		err := unix.Lsetxattr(target, "system.posix_acl_access", aclXattr([3]uint32{aclUser, 7, 65534}), 0)
		if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
			t.Skipf("%s: this filesystem keeps no POSIX ACLs", target)
		}
		if err != nil {
			t.Fatal(err)
		}
		if why, err := WhoCanReplace(exe); err != nil || !strings.Contains(why, "uid 65534 write") {
			t.Errorf("an ACL on the %s: %q, %v; want uid 65534 named", on, why, err)
		}
	}
}

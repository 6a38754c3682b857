package gather

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// account is a user whose home may hold state: its uid and primary gid
// (what its reader child runs as) and its home.
type account struct {
	UID, GID uint32
	Home     string
	Name     string // empty where the accounts are not named (macOS's homes)
}

// accounts lists the accounts whose homes may hold state: /etc/passwd's.
// macOS keeps its users in Directory Services, and its /etc/passwd has
// only root and the system accounts: the homes under /Users, each owned
// by its account, stand for the rest there (reaper does not shell out to
// dscl to read state). Which system keeps its accounts where is data,
// not a file per OS.
func accounts() []account {
	out := passwd("/etc/passwd")
	if runtime.GOOS == "darwin" {
		out = append(out, dirAccounts("/Users")...)
	}
	return out
}

// maxPasswd bounds the account database read.
const maxPasswd = 16 << 20

// passwd reads the accounts of a passwd(5) file:
// name:password:uid:gid:gecos:home:shell. Homes that are not absolute, or
// are "/", are left out.
func passwd(path string) []account {
	b, err := platform.ReadFile(path, maxPasswd)
	if err != nil {
		return nil
	}
	var out []account
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 7 || !filepath.IsAbs(f[5]) || filepath.Clean(f[5]) == "/" {
			continue
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, account{UID: uint32(uid), GID: uint32(gid), Home: filepath.Clean(f[5]), Name: f[0]})
	}
	return out
}

// dirAccounts lists the directories below root (macOS's /Users) as the
// homes of the uids that own them, with the directory's group: macOS keeps
// its accounts in Directory Services, not in /etc/passwd, and a home is
// owned by its account.
func dirAccounts(root string) []account {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []account
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "Shared" {
			continue
		}
		home := filepath.Join(root, e.Name())
		fi, err := os.Lstat(home)
		if err != nil {
			continue
		}
		if uid, gid, ok := platform.FileOwner(fi); ok && uid != 0 {
			out = append(out, account{UID: uid, GID: gid, Home: home})
		}
	}
	return out
}

// gidOf is uid's primary group from the accounts, else nogroup (65534): a
// reader child needs some group, and the state's files are its owner's.
func gidOf(accts []account, uid uint32) uint32 {
	for _, a := range accts {
		if a.UID == uid {
			return a.GID
		}
	}
	return 65534
}

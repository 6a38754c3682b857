package platform

import "golang.org/x/sys/unix"

// pathOnly opens a directory for its *at calls alone (open(2): O_PATH),
// which a directory one may search but not read allows.
const pathOnly = unix.O_PATH

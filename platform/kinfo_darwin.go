package platform

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Compile-time proof that kinfo_parse.go's offsets are the kernel's: each
// pair of array types has a negative length, so does not compile, unless
// the offset equals x/sys's unix.KinfoProc field offset on this GOARCH.
var k unix.KinfoProc

var (
	_ [kinfoSize - unsafe.Sizeof(k)]struct{}
	_ [unsafe.Sizeof(k) - kinfoSize]struct{}
	_ [kinfoStartSec - unsafe.Offsetof(k.Proc.P_starttime)]struct{}
	_ [unsafe.Offsetof(k.Proc.P_starttime) - kinfoStartSec]struct{}
	_ [kinfoStartUsec - unsafe.Offsetof(k.Proc.P_starttime) - unsafe.Offsetof(k.Proc.P_starttime.Usec)]struct{}
	_ [unsafe.Offsetof(k.Proc.P_starttime) + unsafe.Offsetof(k.Proc.P_starttime.Usec) - kinfoStartUsec]struct{}
	_ [kinfoStat - unsafe.Offsetof(k.Proc.P_stat)]struct{}
	_ [unsafe.Offsetof(k.Proc.P_stat) - kinfoStat]struct{}
	_ [kinfoPID - unsafe.Offsetof(k.Proc.P_pid)]struct{}
	_ [unsafe.Offsetof(k.Proc.P_pid) - kinfoPID]struct{}
	_ [kinfoComm - unsafe.Offsetof(k.Proc.P_comm)]struct{}
	_ [unsafe.Offsetof(k.Proc.P_comm) - kinfoComm]struct{}
	_ [kinfoCommLen - len(k.Proc.P_comm)]struct{}
	_ [len(k.Proc.P_comm) - kinfoCommLen]struct{}
	_ [kinfoRUID - unsafe.Offsetof(k.Eproc) - unsafe.Offsetof(k.Eproc.Pcred) - unsafe.Offsetof(k.Eproc.Pcred.P_ruid)]struct{}
	_ [unsafe.Offsetof(k.Eproc) + unsafe.Offsetof(k.Eproc.Pcred) + unsafe.Offsetof(k.Eproc.Pcred.P_ruid) - kinfoRUID]struct{}
	_ [kinfoPPID - unsafe.Offsetof(k.Eproc) - unsafe.Offsetof(k.Eproc.Ppid)]struct{}
	_ [unsafe.Offsetof(k.Eproc) + unsafe.Offsetof(k.Eproc.Ppid) - kinfoPPID]struct{}
	_ [kinfoPGID - unsafe.Offsetof(k.Eproc) - unsafe.Offsetof(k.Eproc.Pgid)]struct{}
	_ [unsafe.Offsetof(k.Eproc) + unsafe.Offsetof(k.Eproc.Pgid) - kinfoPGID]struct{}
)

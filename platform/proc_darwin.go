package platform

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultProcRoot is empty: macOS has no procfs; --proc does not apply.
const DefaultProcRoot = ""

func readSnapshot(root string) (*Snapshot, error) {
	if root != "" {
		return nil, fmt.Errorf("a process-table root (%s) on darwin: %w", root, errors.ErrUnsupported)
	}
	raw, err := unix.SysctlRaw("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("sysctl kern.proc.all: %w", err)
	}
	boot, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return nil, fmt.Errorf("sysctl kern.boottime: %w", err)
	}
	s, err := DarwinSnapshot(raw, procargs2, getsid, residentSize, time.Now(), time.Unix(boot.Unix()))
	if err != nil {
		return nil, err
	}
	s.Self = os.Getpid()
	if id, err := unix.Sysctl("kern.bootsessionuuid"); err == nil {
		s.BootID = id
	}
	return s, nil
}

// ProcArgs is kern.procargs2 of one pid now: its argv and environment,
// as ParseProcArgs2 reads them.
func ProcArgs(pid int) ([]byte, error) { return procargs2(pid) }

func procargs2(pid int) ([]byte, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, fmt.Errorf("procargs2 of %d: %w", pid, ErrNoArgs)
	}
	return b, nil
}

func getsid(pid int) int {
	sid, err := unix.Getsid(pid)
	if err != nil {
		return 0
	}
	return sid
}

// residentSize asks proc_info(2) for PROC_PIDTASKINFO, whose struct
// proc_taskinfo begins with pti_virtual_size and pti_resident_size (both
// uint64; sys/proc_info.h). Without privilege for another user's process
// it fails, and the size is left 0. Not verified on a real Mac.
func residentSize(pid int) uint64 {
	const (
		procInfoCallPIDInfo = 2
		procPIDTaskInfo     = 4
		sizeofTaskInfo      = 96
	)
	var buf [sizeofTaskInfo]byte
	//lint:ignore SA1019 x/sys has no libSystem wrapper for proc_pidinfo; the proc_info syscall is what it calls.
	n, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPIDInfo, uintptr(pid), procPIDTaskInfo, 0,
		uintptr(unsafe.Pointer(&buf[0])), sizeofTaskInfo)
	if errno != 0 || n < 16 {
		return 0
	}
	return *(*uint64)(unsafe.Pointer(&buf[8]))
}

// ProcessOf reads the kinfo_proc of one pid now.
func ProcessOf(pid int) (*Process, error) { return kinfoOf(pid) }

// kinfoOf reads the kinfo_proc of one pid now.
func kinfoOf(pid int) (*Process, error) {
	raw, err := unix.SysctlRaw("kern.proc.pid", pid)
	if err != nil {
		return nil, err
	}
	procs, err := ParseKinfoProcs(raw)
	if err != nil {
		return nil, err
	}
	if len(procs) == 0 || procs[0].PID != pid {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	return &procs[0], nil
}

func startIdentity(pid int) (string, error) {
	p, err := kinfoOf(pid)
	if err != nil {
		return "", fmt.Errorf("start identity of %d: %w", pid, err)
	}
	return FormatDarwinIdentity(p.StartTicks), nil
}

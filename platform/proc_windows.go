package platform

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// DefaultProcRoot is empty: Windows has no procfs; --proc does not apply.
const DefaultProcRoot = ""

// kernel32 is the DLL of the calls x/sys does not wrap.
var kernel32 = windows.NewLazySystemDLL("kernel32.dll")

// getTickCount64 is kernel32's GetTickCount64: the milliseconds since the
// system started (x/sys does not wrap it).
var getTickCount64 = kernel32.NewProc("GetTickCount64")

// bootTime is when the system started, as of now: now less
// GetTickCount64; zero where it cannot be called.
func bootTime(now time.Time) time.Time {
	if getTickCount64.Find() != nil {
		return time.Time{}
	}
	ms, _, _ := getTickCount64.Call()
	return now.Add(-time.Duration(ms) * time.Millisecond)
}

// readSnapshot reads the whole table in one call,
// NtQuerySystemInformation(SystemProcessInformation): pid, parent pid,
// creation time, image name, session, working set and threads of every
// process, with no handle opened. The owner (a handle and its token) is
// read when it is asked (Snapshot.Owner, Snapshot.UID), once; command
// lines and environments later too, for the candidates alone, from their
// PEBs.
func readSnapshot(root string) (*Snapshot, error) {
	if root != "" {
		return nil, fmt.Errorf("a process-table root (%s) on windows: %w", root, errors.ErrUnsupported)
	}
	raw, err := systemProcesses()
	if err != nil {
		return nil, err
	}
	taken := time.Now()
	boot := bootTime(taken)
	var procs []WinProc
	for off := 0; off < len(raw); {
		spi := (*windows.SYSTEM_PROCESS_INFORMATION)(unsafe.Pointer(&raw[off]))
		procs = append(procs, WinProc{
			PID: int(spi.UniqueProcessID), PPID: int(spi.InheritedFromUniqueProcessID),
			Created: filetime(spi.CreateTime), Image: spi.ImageName.String(), Session: spi.SessionID,
			WorkingSet: uint64(spi.WorkingSetSize), Threads: int32(spi.NumberOfThreads),
			UID: NoUID, // read when asked (Snapshot.Owner): a handle and its token each
		})
		if spi.NextEntryOffset == 0 {
			break
		}
		off += int(spi.NextEntryOffset)
	}
	s := WindowsSnapshot(procs, taken, boot, pebDetails)
	s.reader.(*winReader).owners = ownerRID
	s.lazyOwners = true
	s.containers = readContainers
	s.Self = os.Getpid()
	return s, nil
}

// systemProcesses is SystemProcessInformation's buffer, grown until the
// table fits (it changes between the calls).
func systemProcesses() ([]byte, error) {
	size := uint32(512 << 10)
	for tries := 0; tries < 8; tries++ {
		buf := make([]byte, size)
		var need uint32
		err := windows.NtQuerySystemInformation(windows.SystemProcessInformation, unsafe.Pointer(&buf[0]), size, &need)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH):
			size = max(need, size) + 64<<10
		default:
			return nil, fmt.Errorf("NtQuerySystemInformation(SystemProcessInformation): %w", err)
		}
	}
	return nil, errors.New("NtQuerySystemInformation(SystemProcessInformation): the table kept growing")
}

// filetime is a FILETIME's 100-nanosecond intervals since 1601 as a time.
func filetime(t int64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	ft := windows.Filetime{LowDateTime: uint32(t), HighDateTime: uint32(t >> 32)}
	return time.Unix(0, ft.Nanoseconds())
}

// ownerRID is the relative id of the user SID of pid's token (1001 for a
// local account): the uid a Windows process stands for here. NoUID where
// the process cannot be opened or its token read — another user's, or a
// protected process, without privilege.
func ownerRID(pid int) uint32 {
	if pid == 0 {
		return NoUID
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return NoUID
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return NoUID
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return NoUID
	}
	return sidRID(u.User.Sid)
}

// sidRID is a SID's last sub-authority: its relative id.
func sidRID(sid *windows.SID) uint32 {
	if sid == nil || sid.SubAuthorityCount() == 0 {
		return NoUID
	}
	return sid.SubAuthority(uint32(sid.SubAuthorityCount() - 1))
}

// pebDetails reads pid's command line and environment from its PEB: the
// process's RTL_USER_PROCESS_PARAMETERS, copied out with
// ReadProcessMemory (NtQueryInformationProcess's
// ProcessCommandLineInformation is newer, and Wine has none).
//
// What is read is another process's memory: its addresses are numbers
// here, never Go pointers. x/sys's PEB and RTL_USER_PROCESS_PARAMETERS
// type them as pointers, and a Go pointer that holds a foreign address
// kills the garbage collector ("invalid pointer found on stack"); only
// their field offsets are taken from them.
func pebDetails(pid int) (string, []string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION|windows.PROCESS_VM_READ, false, uint32(pid))
	if err != nil {
		return "", nil, fmt.Errorf("open %d: %w", pid, ErrNoArgs)
	}
	defer windows.CloseHandle(h)
	// PROCESS_BASIC_INFORMATION, its PebBaseAddress a number.
	var pbi struct {
		ExitStatus                   uintptr
		PebBaseAddress               uintptr
		AffinityMask                 uintptr
		BasePriority                 uintptr
		UniqueProcessID              uintptr
		InheritedFromUniqueProcessID uintptr
	}
	if err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation, unsafe.Pointer(&pbi), uint32(unsafe.Sizeof(pbi)), nil); err != nil {
		return "", nil, fmt.Errorf("process %d: %w", pid, ErrNoArgs)
	}
	var (
		offParams  = unsafe.Offsetof(windows.PEB{}.ProcessParameters)
		offCmdline = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.CommandLine)
		offEnv     = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.Environment)
		offEnvSize = unsafe.Offsetof(windows.RTL_USER_PROCESS_PARAMETERS{}.EnvironmentSize)
	)
	params, err := readWord(h, pbi.PebBaseAddress+offParams)
	if err != nil || params == 0 {
		return "", nil, fmt.Errorf("PEB of %d: %w", pid, ErrNoArgs)
	}
	// UNICODE_STRING: Length and MaximumLength (uint16 each), then the
	// buffer's address, aligned.
	var us struct {
		Length, MaximumLength uint16
		_                     uint32
		Buffer                uintptr
	}
	if err := readMem(h, params+offCmdline, unsafe.Pointer(&us), unsafe.Sizeof(us)); err != nil {
		return "", nil, fmt.Errorf("parameters of %d: %w", pid, ErrNoArgs)
	}
	cmdline, err := readUTF16(h, us.Buffer, int(us.Length))
	if err != nil {
		return "", nil, fmt.Errorf("command line of %d: %w", pid, ErrNoArgs)
	}
	env, err1 := readWord(h, params+offEnv)
	envSize, err2 := readWord(h, params+offEnvSize)
	if err1 != nil || err2 != nil || env == 0 {
		return cmdline, nil, nil // the command line alone: an environment unread is no marker
	}
	size := int(envSize)
	if size <= 0 || size > MaxDetail {
		size = MaxDetail
	}
	block, err := readUTF16(h, env, size)
	if err != nil {
		return cmdline, nil, nil
	}
	var vars []string
	for start, i := 0, 0; i < len(block); i++ {
		if block[i] == 0 {
			if i == start {
				break // the block ends with an empty string
			}
			vars = append(vars, block[start:i])
			start = i + 1
		}
	}
	return cmdline, vars, nil
}

// readWord reads one address-sized number at addr of h's memory.
func readWord(h windows.Handle, addr uintptr) (uintptr, error) {
	var w uintptr
	if err := readMem(h, addr, unsafe.Pointer(&w), unsafe.Sizeof(w)); err != nil {
		return 0, err
	}
	return w, nil
}

func readMem(h windows.Handle, addr uintptr, to unsafe.Pointer, n uintptr) error {
	var got uintptr
	if err := windows.ReadProcessMemory(h, addr, (*byte)(to), n, &got); err != nil && got == 0 {
		return err
	}
	return nil
}

// readUTF16 reads n bytes of UTF-16 at addr, as a string, NULs and all
// (an environment block is NUL-separated).
func readUTF16(h windows.Handle, addr uintptr, n int) (string, error) {
	if n <= 0 || addr == 0 {
		return "", nil
	}
	buf := make([]uint16, n/2)
	var got uintptr
	if err := windows.ReadProcessMemory(h, addr, (*byte)(unsafe.Pointer(&buf[0])), uintptr(len(buf)*2), &got); err != nil && got == 0 {
		return "", err
	}
	return string(utf16.Decode(buf[:got/2])), nil
}

// startIdentity is pid's creation time, as Identity spells a wall-clock
// start: read through a handle, which pins the pid while it is open.
func startIdentity(pid int) (string, error) {
	created, err := creationTime(pid)
	if err != nil {
		return "", fmt.Errorf("start identity of %d: %w", pid, err)
	}
	return FormatDarwinIdentity(uint64(created.UnixMicro())), nil
}

// creationTime is pid's creation time (GetProcessTimes).
func creationTime(pid int) (time.Time, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return time.Time{}, err
	}
	defer windows.CloseHandle(h)
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &e, &k, &u); err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, c.Nanoseconds()), nil
}

// recordOwnerLive: a record's writer lives when its pid names a process
// of that owner created before the record was written.
func recordOwnerLive(pid int, uid uint32, written time.Time) bool {
	if pid <= 0 {
		return false
	}
	created, err := creationTime(pid)
	if err != nil {
		return false
	}
	if owner := ownerRID(pid); owner != uid {
		return false
	}
	return written.IsZero() || !created.After(written)
}

package platform

import (
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// getProcessMemoryInfo is psapi's GetProcessMemoryInfo, which kernel32
// exports as K32GetProcessMemoryInfo since Windows 7 (and wine).
// GetProcessHandleCount is kernel32's, which x/sys does not wrap.
var (
	getProcessMemoryInfo  = kernel32.NewProc("K32GetProcessMemoryInfo")
	getProcessHandleCount = kernel32.NewProc("GetProcessHandleCount")
)

// processMemoryCountersEx is PROCESS_MEMORY_COUNTERS_EX (psapi.h).
type processMemoryCountersEx struct {
	cb                         uint32
	PageFaultCount             uint32
	PeakWorkingSetSize         uintptr
	WorkingSetSize             uintptr
	QuotaPeakPagedPoolUsage    uintptr
	QuotaPagedPoolUsage        uintptr
	QuotaPeakNonPagedPoolUsage uintptr
	QuotaNonPagedPoolUsage     uintptr
	PagefileUsage              uintptr
	PeakPagefileUsage          uintptr
	PrivateUsage               uintptr
}

// readOwnUsage reads GetProcessTimes (CPU, start), GetProcessMemoryInfo
// (working set, its peak, private bytes) and GetProcessHandleCount.
func readOwnUsage() (OwnUsage, error) {
	var u OwnUsage
	h := windows.CurrentProcess()
	var c, x, k, us windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &us); err != nil {
		return u, err
	}
	ticks := func(f windows.Filetime) float64 {
		return float64(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) / 1e7
	}
	u.CPUSeconds = ticks(k) + ticks(us)
	u.Start = time.Unix(0, c.Nanoseconds())
	mc := processMemoryCountersEx{cb: uint32(unsafe.Sizeof(processMemoryCountersEx{}))}
	if r, _, _ := getProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&mc)), uintptr(mc.cb)); r != 0 {
		u.RSS, u.PeakRSS, u.Virtual = uint64(mc.WorkingSetSize), uint64(mc.PeakWorkingSetSize), uint64(mc.PrivateUsage)
	}
	var n uint32
	if r, _, _ := getProcessHandleCount.Call(uintptr(h), uintptr(unsafe.Pointer(&n))); r != 0 {
		u.OpenFDs = int(n)
	}
	return u, nil
}

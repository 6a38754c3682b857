package platform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The calls the containers are read with. The object directory's are
// ntdll's (the Win32 API has none: WinObj and osquery's
// basenamedobjects table use them too); the package calls are
// kernel32's, and Wine 8 has no GetPackagesByPackageFamily, so the
// installed version is not known there (Container.Installed nil).
var (
	msixNtdll                  = windows.NewLazySystemDLL("ntdll.dll")
	ntOpenDirectoryObject      = msixNtdll.NewProc("NtOpenDirectoryObject")
	ntQueryDirectoryObject     = msixNtdll.NewProc("NtQueryDirectoryObject")
	ntOpenJobObject            = msixNtdll.NewProc("NtOpenJobObject")
	getPackageFullName         = kernel32.NewProc("GetPackageFullName")
	getPackagesByPackageFamily = kernel32.NewProc("GetPackagesByPackageFamily")
)

const (
	directoryQuery = 0x0001 // DIRECTORY_QUERY
	jobObjectQuery = 0x0004 // JOB_OBJECT_QUERY
	// appmodelErrorNoPackage is APPMODEL_ERROR_NO_PACKAGE (winerror.h):
	// the process has no package identity.
	appmodelErrorNoPackage = 15700
	// The bounds of one read: entries of a directory, members of a job.
	maxDirEntries = 1 << 16
	maxJobMembers = 1 << 14
)

// readContainers lists the containers of this process's user: the
// Container_* jobs named with its SID in its session's
// BaseNamedObjects and in the global one, each with its members and
// their package identities. Another user's containers are not read: a
// reaper on Windows acts for its own user. Anything that could not be
// read is an error, never a shorter list.
func readContainers() ([]Container, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("containers: this process's user: %w", err)
	}
	sid := u.User.Sid.String()
	var session uint32
	if err := windows.ProcessIdToSessionId(windows.GetCurrentProcessId(), &session); err != nil {
		return nil, fmt.Errorf("containers: this process's session: %w", err)
	}
	var out []Container
	for _, dir := range []string{`\Sessions\` + strconv.FormatUint(uint64(session), 10) + `\BaseNamedObjects`, `\BaseNamedObjects`} {
		cs, err := dirContainers(dir, sid)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// dirContainers reads the containers of the user sid in the object
// directory dir. A directory that does not exist holds none.
func dirContainers(dir, sid string) ([]Container, error) {
	d, err := openObject(ntOpenDirectoryObject, 0, dir, directoryQuery)
	if errors.Is(err, windows.STATUS_OBJECT_NAME_NOT_FOUND) || errors.Is(err, windows.STATUS_OBJECT_PATH_NOT_FOUND) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("containers: open %s: %w", dir, err)
	}
	defer windows.CloseHandle(d)
	names, err := jobNames(d, dir)
	if err != nil {
		return nil, err
	}
	var out []Container
	for _, name := range names {
		pkg, owner, ok := ContainerJob(name)
		if !ok || !strings.EqualFold(owner, sid) {
			continue
		}
		j, err := openObject(ntOpenJobObject, d, name, jobObjectQuery)
		if errors.Is(err, windows.STATUS_OBJECT_NAME_NOT_FOUND) {
			continue // closed since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("containers: open job %s\\%s: %w", dir, name, err)
		}
		pids, err := jobPIDs(j)
		windows.CloseHandle(j)
		if err != nil {
			return nil, fmt.Errorf("containers: the members of job %s: %w", name, err)
		}
		c := Container{Job: name, Package: pkg, Installed: installed(pkg)}
		for _, pid := range pids {
			c.Members = append(c.Members, member(pid))
		}
		out = append(out, c)
	}
	return out, nil
}

// openObject opens the object name (relative to root, or absolute) with
// one of ntdll's NtOpen*Object calls, which share their arguments.
func openObject(open *windows.LazyProc, root windows.Handle, name string, access uint32) (windows.Handle, error) {
	if err := open.Find(); err != nil {
		return 0, err
	}
	u, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return 0, err
	}
	oa := windows.OBJECT_ATTRIBUTES{RootDirectory: root, ObjectName: u, Attributes: windows.OBJ_CASE_INSENSITIVE}
	oa.Length = uint32(unsafe.Sizeof(oa))
	var h windows.Handle
	r, _, _ := open.Call(uintptr(unsafe.Pointer(&h)), uintptr(access), uintptr(unsafe.Pointer(&oa)))
	if st := windows.NTStatus(r); st != windows.STATUS_SUCCESS {
		return 0, st
	}
	return h, nil
}

// objectDirectoryInformation is OBJECT_DIRECTORY_INFORMATION: one entry
// of NtQueryDirectoryObject's answer.
type objectDirectoryInformation struct {
	Name, TypeName windows.NTUnicodeString
}

// jobNames lists the names of the Job objects in the directory d, many
// entries a call; where that is not implemented (Wine 8 answers
// STATUS_NOT_IMPLEMENTED), one a call, from the start again.
func jobNames(d windows.Handle, dir string) ([]string, error) {
	if err := ntQueryDirectoryObject.Find(); err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	var names []string
	var context, ret uint32
	single := uintptr(0)
	for seen, restart := 0, uintptr(1); ; restart = 0 {
		r, _, _ := ntQueryDirectoryObject.Call(uintptr(d), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), single, restart,
			uintptr(unsafe.Pointer(&context)), uintptr(unsafe.Pointer(&ret)))
		st := windows.NTStatus(r)
		switch {
		case st == windows.STATUS_NO_MORE_ENTRIES:
			return names, nil
		case st == windows.STATUS_NOT_IMPLEMENTED && single == 0:
			single, restart, names, seen = 1, 1, nil, 0
			continue
		case st != windows.STATUS_SUCCESS && st != windows.STATUS_MORE_ENTRIES:
			return nil, fmt.Errorf("containers: list %s: %w", dir, st)
		}
		size := unsafe.Sizeof(objectDirectoryInformation{})
		for off := uintptr(0); off+size <= uintptr(len(buf)); off += size {
			e := (*objectDirectoryInformation)(unsafe.Pointer(&buf[off]))
			if e.Name.Length == 0 && e.TypeName.Length == 0 {
				break
			}
			if seen++; seen > maxDirEntries {
				return nil, fmt.Errorf("containers: %s lists more than %d objects", dir, maxDirEntries)
			}
			if e.TypeName.String() == "Job" {
				names = append(names, e.Name.String())
			}
			if single == 1 {
				break
			}
		}
		if st == windows.STATUS_SUCCESS && single == 0 {
			return names, nil
		}
	}
}

// jobPIDs lists the processes of the job j
// (JobObjectBasicProcessIdList), its buffer grown until all fit.
func jobPIDs(j windows.Handle) ([]int, error) {
	for n := 64; ; n *= 4 {
		if n > maxJobMembers {
			return nil, fmt.Errorf("more than %d processes", maxJobMembers)
		}
		// JOBOBJECT_BASIC_PROCESS_ID_LIST: two DWORDs, then the
		// ULONG_PTRs, from byte 8 (on 64-bit and 32-bit alike).
		buf := make([]uintptr, 2+n)
		head := (*[2]uint32)(unsafe.Pointer(&buf[0]))
		err := windows.QueryInformationJobObject(j, windows.JobObjectBasicProcessIdList, uintptr(unsafe.Pointer(&buf[0])), uint32(8+n*int(unsafe.Sizeof(buf[0]))), nil)
		assigned, listed := head[0], head[1]
		if errors.Is(err, windows.ERROR_MORE_DATA) || (err == nil && listed < assigned) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if int(listed) > n {
			return nil, fmt.Errorf("the job lists %d processes in room for %d", listed, n)
		}
		list := unsafe.Slice((*uintptr)(unsafe.Add(unsafe.Pointer(&buf[0]), 8)), n)
		pids := make([]int, 0, listed)
		for _, p := range list[:listed] {
			pids = append(pids, int(p))
		}
		return pids, nil
	}
}

// member reads the package identity and image of the process pid. What
// cannot be read is said (Unread): its identity is then not known.
func member(pid int) ContainerMember {
	m := ContainerMember{PID: pid}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		m.Unread = true
		return m
	}
	defer windows.CloseHandle(h)
	img := make([]uint16, windows.MAX_LONG_PATH)
	if n := uint32(len(img)); windows.QueryFullProcessImageName(h, 0, &img[0], &n) == nil {
		m.Image = windows.UTF16ToString(img[:n])
	}
	if getPackageFullName.Find() != nil {
		m.Unread = true
		return m
	}
	name := make([]uint16, 128)
	n := uint32(len(name))
	r, _, _ := getPackageFullName.Call(uintptr(h), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&name[0])))
	if r == uintptr(windows.ERROR_INSUFFICIENT_BUFFER) && n > 0 && n < 4096 {
		name = make([]uint16, n)
		r, _, _ = getPackageFullName.Call(uintptr(h), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&name[0])))
	}
	switch r {
	case 0:
		m.Package = windows.UTF16ToString(name)
	case appmodelErrorNoPackage:
	default:
		m.Unread = true
	}
	return m
}

// installed lists the full names of pkg's family installed for this
// user (GetPackagesByPackageFamily); nil when they could not be read.
func installed(pkg string) []string {
	id, ok := ParsePackageFullName(pkg)
	if !ok || getPackagesByPackageFamily.Find() != nil {
		return nil
	}
	family, err := windows.UTF16PtrFromString(id.Family())
	if err != nil {
		return nil
	}
	var count, size uint32
	r, _, _ := getPackagesByPackageFamily.Call(uintptr(unsafe.Pointer(family)), uintptr(unsafe.Pointer(&count)), 0, uintptr(unsafe.Pointer(&size)), 0)
	if r == 0 && count == 0 {
		return []string{}
	}
	if r != uintptr(windows.ERROR_INSUFFICIENT_BUFFER) || count == 0 || count > 64 || size == 0 || size > 1<<16 {
		return nil
	}
	ptrs := make([]*uint16, count)
	buf := make([]uint16, size)
	r, _, _ = getPackagesByPackageFamily.Call(uintptr(unsafe.Pointer(family)), uintptr(unsafe.Pointer(&count)), uintptr(unsafe.Pointer(&ptrs[0])),
		uintptr(unsafe.Pointer(&size)), uintptr(unsafe.Pointer(&buf[0])))
	if r != 0 || int(count) > len(ptrs) {
		return nil
	}
	out := make([]string, 0, count)
	for _, p := range ptrs[:count] {
		out = append(out, windows.UTF16PtrToString(p))
	}
	return out
}

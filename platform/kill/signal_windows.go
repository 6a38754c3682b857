package kill

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/orphanreaper/reaper/platform"
)

// Handle is an open process handle, checked against the creation time the
// scan saw. Windows pins a pid while a handle to its process is open (the
// pid is not reused until the last handle closes), so every act through
// the handle reaches that process and no other: the pidfd's guarantee.
type Handle struct {
	PID   int
	h     windows.Handle
	guard *Guard
	// stopped: suspended through this handle, and not resumed since.
	stopped bool
}

// The rights a reap needs: to end, suspend and resume the process, to put
// it in a job (PROCESS_SET_QUOTA with PROCESS_TERMINATE), to read
// its times, and to wait for its exit.
const handleRights = windows.PROCESS_TERMINATE | windows.PROCESS_SUSPEND_RESUME | windows.PROCESS_SET_QUOTA |
	windows.PROCESS_QUERY_LIMITED_INFORMATION | windows.SYNCHRONIZE

// NtSuspendProcess and NtResumeProcess stop and continue every thread of
// a process: Windows' SIGSTOP and SIGCONT (ntdll's, undocumented but
// stable since XP; Process Explorer's and PsSuspend's).
var (
	ntdll          = windows.NewLazySystemDLL("ntdll.dll")
	ntSuspend      = ntdll.NewProc("NtSuspendProcess")
	ntResume       = ntdll.NewProc("NtResumeProcess")
	stillActive    = uint32(259) // STILL_ACTIVE
	terminatedCode = uint32(1)
)

// parentPID reads pid's recorded parent from the table.
func parentPID(pid int) (int, error) {
	s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	p := s.Get(pid)
	if p == nil {
		return 0, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	return p.PPID, nil
}

func pidfdSupported() (pidfd, pidfs bool) { return false, false }

func open(t Target, g *Guard) (*Handle, error) {
	if t.PID == 4 {
		return nil, &RefusalError{t.PID, "the System process is never signalled"}
	}
	if err := g.check(t.PID); err != nil {
		return nil, err
	}
	h, err := windows.OpenProcess(handleRights, false, uint32(t.PID))
	switch {
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return nil, fmt.Errorf("pid %d: %w", t.PID, ErrGone)
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return nil, fmt.Errorf("pid %d: %w", t.PID, ErrPermission)
	case err != nil:
		return nil, fmt.Errorf("open pid %d: %w", t.PID, err)
	}
	hd := &Handle{PID: t.PID, h: h, guard: g}
	// The handle pins the pid from here: the creation time read through
	// it is the process's for as long as the handle is open.
	var c, e, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &e, &k, &u); err != nil {
		hd.close()
		return nil, fmt.Errorf("times of pid %d: %w", t.PID, err)
	}
	if created := uint64(time.Unix(0, c.Nanoseconds()).UnixMicro()); created != t.StartTicks {
		hd.close()
		return nil, fmt.Errorf("pid %d was created %s, the scan saw %s: %w", t.PID,
			platform.FormatDarwinIdentity(created), platform.FormatDarwinIdentity(t.StartTicks), ErrIdentity)
	}
	if hd.exited() {
		hd.close()
		return nil, fmt.Errorf("pid %d has exited: %w", t.PID, ErrGone)
	}
	return hd, nil
}

// exited reports whether the handle's process has ended (its handle is
// signalled: a just-ended pid can still be opened for a moment).
func (h *Handle) exited() bool {
	ev, err := windows.WaitForSingleObject(h.h, 0)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

func (h *Handle) pidfd() bool { return true } // the handle pins the pid, as a pidfd does

func (h *Handle) close() error {
	if h.h == 0 {
		return nil
	}
	err := windows.CloseHandle(h.h)
	h.h = 0
	return err
}

// signal acts through the handle: Stop suspends every thread
// (NtSuspendProcess), Continue resumes them; Interrupt, Term and Kill all
// end the process (TerminateProcess) — Windows sends no signal a process
// outside the sender's console can catch, so a polite request is none
// (docs/windows.md says what each action means there). Signal 0 proves
// the process lives.
func (h *Handle) signal(sig syscall.Signal) error {
	if err := h.guard.check(h.PID); err != nil {
		return err
	}
	if h.h == 0 {
		return fmt.Errorf("pid %d: the handle is closed: %w", h.PID, ErrGone)
	}
	if h.exited() {
		return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
	}
	var err error
	switch sig {
	case 0:
		return nil
	case Stop:
		if err = ntStatus(ntSuspend.Call(uintptr(h.h))); err == nil {
			h.stopped = true
		}
	case Continue:
		if err = ntStatus(ntResume.Call(uintptr(h.h))); err == nil {
			h.stopped = false
		}
	case Interrupt, Term, Kill:
		err = windows.TerminateProcess(h.h, terminatedCode)
	default:
		return fmt.Errorf("signal %s to %d on windows: %w", signalName(sig), h.PID, errors.ErrUnsupported)
	}
	switch {
	case err == nil:
		return nil
	case h.exited():
		return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return fmt.Errorf("pid %d: %w", h.PID, ErrPermission)
	}
	return fmt.Errorf("signal %s to %d: %w", signalName(sig), h.PID, err)
}

// ntStatus is an NTSTATUS return as an error (nil for success).
func ntStatus(r uintptr, _ uintptr, _ error) error {
	if r == 0 {
		return nil
	}
	return windows.NTStatus(r)
}

func (h *Handle) waitGone(d time.Duration) bool {
	if h.h == 0 {
		return true
	}
	ms := uint32(min(d.Milliseconds(), 1<<31))
	ev, err := windows.WaitForSingleObject(h.h, ms)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

// state is "" once the process has ended, "T" while this handle holds it
// suspended, else "R": Windows keeps no state letter.
func (h *Handle) state() string {
	if h.h == 0 {
		return ""
	}
	var code uint32
	if err := windows.GetExitCodeProcess(h.h, &code); err == nil && code != stillActive {
		return ""
	}
	if h.stopped {
		return "T"
	}
	return "R"
}

// endCall: see EndCall.
const endCall = "TerminateProcess"

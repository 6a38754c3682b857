package kill

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/orphanreaper/reaper/platform"
)

// A confinement on Windows is a Job Object: the suspended tree is assigned
// to a new job, whatever its members create from then on is born in it (a
// process never leaves a job), and the last step is TerminateJobObject —
// Windows' cgroup.kill, atomic with respect to the tree's own creations.
// It is made without JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: a reaper that
// dies mid-reap leaves the tree as it was, for the next reap's record of
// what is stopped to continue, as on Linux.

// isProcessInJob is kernel32's IsProcessInJob, which x/sys does not wrap.
// Wine refuses it on a limited-query handle (Windows accepts it): a call
// that fails proves nothing and is passed over; one that says no fails
// the move.
var isProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// unitKill names the one call that ends a confinement whole, for the
// records: cgroup.kill on Linux.
const (
	unitKill = "TerminateJobObject"
	unitName = "job object"
)

// Confinement is a Job Object the reaper made for one tree.
type Confinement struct {
	// Path names the job in the records ("job reaper-TAG").
	Path string
	// Moving is told of each process about to be assigned to the job.
	Moving func(pid int, start uint64, from string)

	job   windows.Handle
	guard *Guard
	moved map[int]bool
}

func (h *Handle) cgroup() (string, error) {
	return "", fmt.Errorf("cgroups on windows: %w", errors.ErrUnsupported)
}

func (g *Guard) killCgroup(path string, members []*Handle) ([]Target, error) {
	return nil, fmt.Errorf("cgroups on windows: %w", errors.ErrUnsupported)
}

func cgroup2Root() string { return "" }

func cgroupPopulated(path string) (bool, error) {
	return false, fmt.Errorf("cgroups on windows: %w", errors.ErrUnsupported)
}

func (g *Guard) confine(tag string) (*Confinement, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("a job object: %w", err)
	}
	return &Confinement{Path: fmt.Sprintf("job reaper-%s-%d", tag, time.Now().UnixNano()), job: job, guard: g, moved: map[int]bool{}}, nil
}

// move assigns the process of h, suspended, to the job, and proves it is
// in it (IsProcessInJob on the same handle: the pid cannot have been
// reused while the handle is open).
func (c *Confinement) move(h *Handle) error {
	if h.h == 0 || h.exited() {
		return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
	}
	if c.Moving != nil {
		c.Moving(h.PID, 0, "")
	}
	if err := windows.AssignProcessToJobObject(c.job, h.h); err != nil {
		if h.exited() {
			return fmt.Errorf("pid %d: %w", h.PID, ErrGone)
		}
		return fmt.Errorf("assign pid %d to %s: %w", h.PID, c.Path, err)
	}
	var in int32
	if r, _, _ := isProcessInJob.Call(uintptr(h.h), uintptr(c.job), uintptr(unsafe.Pointer(&in))); r != 0 && in == 0 {
		return fmt.Errorf("pid %d is not in %s after its assignment", h.PID, c.Path)
	}
	c.moved[h.PID] = true
	return nil
}

func (c *Confinement) movedOS(pid int) bool { return c.moved[pid] }

// kill ends the job whole, after checking every process it holds against
// the guard (none is the reaper, an ancestor of it, or denied).
func (c *Confinement) kill() ([]Target, error) {
	pids, err := c.members()
	if err != nil {
		return nil, err
	}
	targets := make([]Target, 0, len(pids))
	for _, pid := range pids {
		if err := c.guard.check(pid); err != nil {
			return nil, fmt.Errorf("%s holds pid %d: %w", c.Path, pid, err)
		}
		t := Target{PID: pid}
		if id, err := platform.StartIdentity(pid); err == nil {
			if us, err := platform.ParseDarwinIdentity(id); err == nil {
				t.StartTicks = us
			}
		}
		targets = append(targets, t)
	}
	if err := windows.TerminateJobObject(c.job, terminatedCode); err != nil {
		return nil, fmt.Errorf("TerminateJobObject %s: %w", c.Path, err)
	}
	return targets, nil
}

// members lists the processes the job holds now
// (JobObjectBasicProcessIdList).
func (c *Confinement) members() ([]int, error) {
	const most = 4096
	buf := make([]byte, 8+most*int(unsafe.Sizeof(uintptr(0))))
	if err := windows.QueryInformationJobObject(c.job, windows.JobObjectBasicProcessIdList, uintptr(unsafe.Pointer(&buf[0])), uint32(len(buf)), nil); err != nil {
		return nil, fmt.Errorf("the members of %s: %w", c.Path, err)
	}
	n := int(*(*uint32)(unsafe.Pointer(&buf[4]))) // NumberOfProcessIdsInList
	ids := unsafe.Slice((*uintptr)(unsafe.Pointer(&buf[8])), min(n, most))
	out := make([]int, 0, len(ids))
	for _, id := range ids {
		out = append(out, int(id))
	}
	return out, nil
}

// active is how many processes of the job live
// (JobObjectBasicAccountingInformation's ActiveProcesses).
func (c *Confinement) active() int {
	// JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (winnt.h), which x/sys does
	// not declare.
	var info struct {
		TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
		TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
	}
	if err := windows.QueryInformationJobObject(c.job, windows.JobObjectBasicAccountingInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return -1
	}
	return int(info.ActiveProcesses)
}

func (c *Confinement) populated() bool { return c.active() != 0 }

func (c *Confinement) procs() []int {
	pids, _ := c.members()
	return pids
}

// remove waits up to a second for the job to empty, then lets it go.
func (c *Confinement) remove() bool {
	deadline := time.Now().Add(time.Second)
	for c.active() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	empty := c.active() == 0
	if c.job != 0 {
		windows.CloseHandle(c.job)
		c.job = 0
	}
	return empty
}

// release gives the job up without ending it: its members stay in a job
// that limits nothing (no process leaves a job) and run on as before.
func (c *Confinement) release() error {
	if c.job != 0 {
		windows.CloseHandle(c.job)
		c.job = 0
	}
	return nil
}

func (g *Guard) reconfined(path string, from map[int]string, first string) (*Confinement, error) {
	return nil, fmt.Errorf("a job given up by a reaper that died: %w", errors.ErrUnsupported)
}

// ConfinementLeft: a job outlives no reaper by name here.
type ConfinementLeft struct {
	Path      string
	Made      time.Time
	Populated bool
}

func sweepConfinementsOS(time.Time) []string { return nil }

func confinements(time.Time) ([]ConfinementLeft, error) {
	return nil, fmt.Errorf("confinements on windows: %w", errors.ErrUnsupported)
}

package platform

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func newBirths() (*Births, error) {
	pids, err := listLivePIDs()
	if err != nil {
		return nil, err
	}
	b := &Births{}
	b.known = make(map[int32]bool, len(pids))
	for _, pid := range pids {
		b.known[pid] = true
	}
	return b, nil
}

func listLivePIDs() ([]int32, error) {
	fd, err := unix.Open(DefaultProcRoot, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	pr := &procReader{fd: fd, root: DefaultProcRoot}
	return pr.listPIDs()
}

func (b *Births) look(young time.Duration, most int) ([]Birth, int, error) {
	pids, err := listLivePIDs()
	if err != nil {
		return nil, 0, err
	}
	var fresh []int32
	known := make(map[int32]bool, len(pids))
	for _, pid := range pids {
		known[pid] = true
		if !b.known[pid] {
			fresh = append(fresh, pid)
		}
	}
	b.known = known
	if len(fresh) == 0 {
		return nil, 0, nil
	}
	up, err := readUptime()
	hz := clockTicks()
	if err != nil || hz == 0 {
		return nil, 0, err
	}
	left := max(len(fresh)-most, 0)
	fresh = fresh[:min(len(fresh), most)]
	parents := map[int]*Process{}
	var out []Birth
	for _, pid := range fresh {
		p, err := ReadStat(int(pid))
		if err != nil {
			continue // gone already
		}
		if up-time.Duration(p.StartTicks)*time.Second/time.Duration(hz) >= young {
			continue
		}
		bt := Birth{Process: *p, UID: NoUID}
		if uid, err := ReadUID(p.PID); err == nil {
			bt.UID = uid
		}
		parent, ok := parents[p.PPID]
		if !ok {
			parent, _ = ReadStat(p.PPID)
			parents[p.PPID] = parent
		}
		bt.Parent = parent
		out = append(out, bt)
	}
	return out, left, nil
}

func readUptime() (time.Duration, error) {
	b, err := os.ReadFile(DefaultProcRoot + "/uptime")
	if err != nil {
		return 0, err
	}
	return parseUptime(b)
}

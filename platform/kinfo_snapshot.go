package platform

import (
	"bytes"
	"strings"
	"time"
)

// DarwinSnapshot builds a snapshot from the records of sysctl kern.proc.all
// (kinfo_proc) and a reader of kern.procargs2 for a pid. The macOS reader
// uses it with live sysctls; tests use it with records made in Go, so the
// darwin code path is the same code on every OS. sid gives a process's
// session (getsid(2)); rss its resident size where the kernel gives it.
func DarwinSnapshot(kinfo []byte, procargs func(pid int) ([]byte, error), sid func(pid int) int,
	rss func(pid int) uint64, taken, boot time.Time) (*Snapshot, error) {
	procs, err := ParseKinfoProcs(kinfo)
	if err != nil {
		return nil, err
	}
	for i := range procs {
		p := &procs[i]
		if sid != nil && !p.Zombie() {
			p.SID = sid(p.PID)
		}
		if rss != nil && !p.Zombie() {
			p.RSS = rss(p.PID)
		}
	}
	s := &Snapshot{Procs: procs, ClockTicks: 1e6, Taken: taken, Uptime: taken.Sub(boot),
		wallStart: true, reader: &procargsReader{read2: procargs}}
	sortProcs(s.Procs)
	return s, nil
}

// procargsReader reads argv and the environment from kern.procargs2 and
// hands them on in /proc's NUL-separated form. macOS has no cgroups and no
// fd links to read this way.
type procargsReader struct {
	read2 func(pid int) ([]byte, error)
}

func (r *procargsReader) fork() detailReader { return r }

func (r *procargsReader) read(pid int, what detail) ([]byte, error) {
	if what != detailCmdline && what != detailEnviron {
		return nil, nil
	}
	b, err := r.read2(pid)
	if err != nil {
		return nil, err
	}
	argv, env, err := ParseProcArgs2(b)
	if err != nil {
		return nil, err
	}
	list := argv
	if what == detailEnviron {
		list = env
	}
	var buf bytes.Buffer
	buf.WriteString(strings.Join(list, "\x00"))
	if len(list) > 0 {
		buf.WriteByte(0)
	}
	return buf.Bytes(), nil
}

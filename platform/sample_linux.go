package platform

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func (s *Snapshot) sampleProcess(p *Process) (Sample, error) {
	now, err := ReadStat(p.PID)
	if err != nil || now.StartTicks != p.StartTicks {
		return Sample{}, fmt.Errorf("pid %d: %w", p.PID, ErrGone)
	}
	out := Sample{At: time.Now(), CPUTicks: now.UTime + now.STime}
	if b, err := os.ReadFile(procPath(p.PID, "io")); err == nil {
		if c, err := ParseIO(b); err == nil {
			out.IO, out.IOKnown = c, true
		}
	}
	if b, err := os.ReadFile(procPath(p.PID, "status")); err == nil {
		out.VoluntarySwitches = parseStatusCounter(b, "voluntary_ctxt_switches:")
	}
	for fd := 0; fd <= 2; fd++ {
		path := procPath(p.PID, "fd/"+strconv.Itoa(fd))
		link, err := os.Readlink(path)
		if err != nil || !strings.HasPrefix(link, "/dev/pts/") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(path, &st) == nil { // follows the link to the tty inode, deleted or not
			out.TTYWritten = time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
			break
		}
	}
	return out, nil
}

// parseStatusCounter reads the number after name in a /proc/PID/status
// file, 0 when absent.
func parseStatusCounter(b []byte, name string) uint64 {
	i := bytes.Index(b, []byte(name))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len(name):])
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(string(f[0]), 10, 64)
	return n
}

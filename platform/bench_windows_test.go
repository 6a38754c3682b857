package platform_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/orphanreaper/reaper/platform"
	"github.com/shirou/gopsutil/v4/process"
)

// benchProcs is how many helper processes the table benchmarks start, so
// that the table read is of a table, not of wine's seven processes.
const benchProcs = 100

// BenchmarkWindowsTable reads the live table with benchProcs more
// processes in it, two ways side by side: reaper's (one
// NtQuerySystemInformation(SystemProcessInformation) call, and each
// process's owner from its token), and gopsutil's listing with what the
// scan needs of each process: its parent pid, name and creation time
// (gopsutil's Processes, then Ppid, Name and CreateTime). Compare the two
// as a ratio (docs/performance.md).
func BenchmarkWindowsTable(b *testing.B) {
	for range benchProcs {
		c := exec.Command(os.Args[0], "-test.run", "^$")
		c.Env = append(os.Environ(), envWinHelper+"=child")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	b.Run("reaper", func(b *testing.B) {
		n := 0
		for b.Loop() {
			s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
			if err != nil {
				b.Fatal(err)
			}
			n = len(s.Procs)
			s.Close()
		}
		b.ReportMetric(float64(n), "procs")
	})
	b.Run("gopsutil", func(b *testing.B) {
		n := 0
		for b.Loop() {
			ps, err := process.Processes()
			if err != nil {
				b.Fatal(err)
			}
			n = 0
			for _, p := range ps {
				if _, err := p.Ppid(); err != nil {
					continue
				}
				p.Name()
				p.CreateTime()
				n++
			}
		}
		b.ReportMetric(float64(n), "procs")
	})
}

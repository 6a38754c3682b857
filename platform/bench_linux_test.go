package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeFixture writes a /proc-shaped tree of n processes under dir, in the
// benchmark population's shapes, for benchmarks that must not depend on the
// machine's own table.
func writeFixture(tb testing.TB, dir string, n int) {
	tb.Helper()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for _, d := range []string{"sys/kernel/random", "sys/kernel/pty"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	write("uptime", "100000.00 190000.00\n")
	write("sys/kernel/random/boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n")
	write("sys/kernel/pty/nr", "0\n")
	write("sys/kernel/pty/max", "4096\n")
	for i := 0; i < n; i++ {
		pid, ppid := 100+i, 1
		if i%10 != 0 && i > 0 {
			ppid = 100 + i - 1 // chains, with every tenth process an orphan
		}
		d := fmt.Sprint(pid)
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			tb.Fatal(err)
		}
		write(d+"/stat", fmt.Sprintf("%d (sleep) S %d %d %d 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 %d 2264064 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
			pid, ppid, pid, pid, 5000000+i))
		write(d+"/cmdline", "sleep\x00100000\x00")
		write(d+"/environ", "HOME=/root\x00PATH=/usr/bin\x00")
		write(d+"/cgroup", "0::/user.slice/session-1.scope\n")
	}
}

// BenchmarkReadSnapshot reads a generated 10,000-process fixture: the cost
// of the stat pass (with the uid from fstat) and nothing else.
// The fixture is written once, in the outer benchmark, which runs once.
func BenchmarkReadSnapshot(b *testing.B) {
	dir := b.TempDir()
	const n = 10000
	writeFixture(b, dir, n)
	b.Run(fmt.Sprint(n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := ReadSnapshot(dir)
			if err != nil {
				b.Fatal(err)
			}
			if len(s.Procs) != n {
				b.Fatalf("%d processes, want %d", len(s.Procs), n)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/proc")
	})
}

// BenchmarkReadSnapshotLive reads this machine's own /proc.
func BenchmarkReadSnapshotLive(b *testing.B) {
	procs := 0
	for i := 0; i < b.N; i++ {
		s, err := ReadSnapshot(DefaultProcRoot)
		if err != nil {
			b.Fatal(err)
		}
		procs += len(s.Procs)
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(procs), "ns/proc")
}

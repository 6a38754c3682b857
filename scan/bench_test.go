package scan

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// population builds the benchmark population of scripts/bench-scan.sh in Go: four fan
// trees, two deep chains (n/20 levels each) and an orphan tree of n/10
// processes reparented to PID 1, every process with its details set.
func population(n int) *platform.Snapshot {
	procs := []platform.Process{p(1, 0, "systemd", []string{"/sbin/init"}, nil, "/init.scope")}
	next := 100
	add := func(ppid int, argv []string) int {
		pid := next
		next++
		procs = append(procs, p(pid, ppid, "sleep", argv, []string{"HOME=/root", "PATH=/usr/bin"}, "/user.slice/session-1.scope"))
		return pid
	}
	chain, orphans := n/20, n/10
	fan := (n-2*chain-orphans)/4 - 1
	for f := 0; f < 4; f++ {
		root := add(1, []string{"sleep", "100000"})
		for i := 0; i < fan; i++ {
			add(root, []string{"sleep", "100000"})
		}
	}
	for c := 0; c < 2; c++ {
		parent := 1
		for i := 0; i < chain; i++ {
			parent = add(parent, []string{"sleep", "100000"})
		}
	}
	for i := 0; i < orphans; i++ {
		add(1, []string{"sleep", "100000"})
	}
	return platform.NewSnapshot(procs, "boot", time.Hour, time.Unix(0, 0))
}

// BenchmarkScan measures the pure scan (tree, candidates, reasons, members)
// at three table sizes: ns/proc stays flat if the cost is linear.
func BenchmarkScan(b *testing.B) {
	cfg := Config{
		Owners: []Owner{{Name: "gw", Cmdline: regexp.MustCompile(`dist/entry\.js gateway`),
			PIDEnv: "OPENCLAW_GATEWAY_SERVICE_PID", Cgroup: regexp.MustCompile(`/openclaw-gateway\.service$`)}},
		Subreapers: []Subreaper{{Comm: regexp.MustCompile(`^tini$`), Cmdline: regexp.MustCompile(`tini`)}},
	}
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			snaps := make([]*platform.Snapshot, b.N)
			for i := range snaps {
				snaps[i] = population(n)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Scan(snaps[i], cfg, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(snaps[0].Procs)), "ns/proc")
		})
	}
}

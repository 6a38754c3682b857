package watch_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"
	"github.com/orphanreaper/reaper/run/watch"
)

// This test binary is also the reader child a pass starts (as root).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == gather.ChildCommand {
		os.Exit(gather.ChildMain(os.Args[2:], os.Stdout, os.Stderr, all.Clients, nil))
	}
	os.Exit(skips.Main(m))
}

// BenchmarkWatchPasses makes b.N passes of a live watch — each the whole
// reap of this machine's table, the clients' state dirs read (by reader
// children, as root), the embedded policy, dry-run so nothing is
// signalled — while a churn of short-lived processes of the test's own
// runs beside it, so that every pass meets pids the last one did not. It
// reports the cost of a pass and the process's RSS after the first 100
// passes and after the last: what a watch of weeks grows by. Run by
// scripts/bench-watch.sh with -benchtime 10000x.
func BenchmarkWatchPasses(b *testing.B) {
	pol := policy.Default(policy.Clients{Owners: all.Clients.Owners(), Marks: all.Clients.Marks()})
	dir := b.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The churn: a process started and ended every few milliseconds.
	var churned atomic.Int64
	churnDone := make(chan struct{})
	go func() {
		defer close(churnDone)
		for ctx.Err() == nil {
			if exec.Command("/bin/true").Run() == nil {
				churned.Add(1)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()

	var passes int
	var warm uint64
	start := time.Now()
	cfg := watch.WatchConfig{
		ReapConfig: run.ReapConfig{
			Config:   run.Config{Policy: pol, Clients: all.Clients, Discover: true, Timeout: time.Minute},
			DryRun:   true,
			LockFile: filepath.Join(dir, "reaper.lock"),
			Records:  run.Records{Metrics: filepath.Join(dir, "reaper.prom"), Journal: "off"},
		},
		Backstop: time.Nanosecond, // a pass as soon as the last one ends
		OnPass: func(r *run.Reaped, trigger string) {
			passes++
			if passes == 100 {
				warm = rss(b)
				b.ResetTimer()
				start = time.Now()
			}
			if passes >= b.N+100 {
				cancel()
			}
		},
	}
	b.ResetTimer()
	if err := watch.Watch(ctx, cfg, nil); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	<-churnDone
	end := rss(b)
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(max(b.N, 1)), "ms/pass")
	b.ReportMetric(float64(warm)/(1<<20), "MiB-RSS-after-100")
	b.ReportMetric(float64(end)/(1<<20), "MiB-RSS-at-end")
	b.ReportMetric((float64(end)-float64(warm))/(1<<20), "MiB-RSS-growth")
	b.ReportMetric(float64(churned.Load()), "processes-churned")
	b.ReportMetric(0, "ns/op") // a pass is ms/pass; ns/op would count the warm-up
}

// rss is this process's resident set (VmRSS).
func rss(b *testing.B) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

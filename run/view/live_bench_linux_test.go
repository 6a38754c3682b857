package view_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
)

// BenchmarkLive is what a watch's pass adds for its live figures (the
// copies of servers across sessions, each user's headroom: Pass.LiveFigures)
// beside the pass itself, on this machine's table with three sessions
// titled claude each running the same two servers. "pass" is run.Scan
// alone, "pass+live" the same with Live: the difference is the cost.
// Run beside a population (scripts' pop, or -n of bench-scan.sh):
//
//	go test ./run -run '^$' -bench Live -benchtime 50x
func BenchmarkLive(b *testing.B) {
	dir := b.TempDir()
	bash, err := os.ReadFile("/bin/bash")
	if err != nil {
		b.Fatal(err)
	}
	claude := filepath.Join(dir, "claude")
	if err := os.WriteFile(claude, bash, 0o755); err != nil {
		b.Fatal(err)
	}
	for range 3 {
		c := exec.Command(claude, "-c", `(exec -a "npm exec mcp-remote https://a.bench" sleep 600) & (exec -a "npm exec mcp-remote https://b.bench" sleep 600) & wait`)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
	}
	pol := policy.Default(policy.Clients{Owners: all.Clients.Owners(), Marks: all.Clients.Marks()})
	cfg := run.NewConfig(pol, all.Clients)
	for _, live := range []bool{false, true} {
		name := map[bool]string{false: "pass", true: "pass+live"}[live]
		b.Run(name, func(b *testing.B) {
			copies := 0
			for b.Loop() {
				p, err := run.Scan(context.Background(), cfg, policy.ModeDryRun)
				if err != nil {
					b.Fatal(err)
				}
				if live {
					d, _ := view.LiveFigures(p)
					copies = len(d)
				}
				p.Close()
			}
			if live && copies < 2 {
				b.Fatalf("%d servers copied across sessions, want the bench's 2", copies)
			}
		})
	}
}

package run_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/all"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"
)

// BenchmarkPassState is what users' state costs one run's collect (the
// table read and scanned, the state read and judged), as root, with 20
// users each running a process titled like a gateway that names its
// real-shaped OpenClaw state (scripts/mkstate: leases, codex rows, 200
// exec task rows): "read" is a one-shot scan's, each user's state read by
// a reader child as that user; "kept" is a watch's pass that none of
// their trees is a candidate in, which judges the reads the last pass
// kept against its fresh table and starts no child; "none" is the same
// collect with no state at all, the floor. Run by hand:
//
//	go test ./run -run '^$' -bench PassState -benchtime 200x
func BenchmarkPassState(b *testing.B) {
	if os.Geteuid() != 0 {
		skips.Skip(b, "needs root: users' state is read by reader children that drop to each user")
	}
	const users = 20
	dir, err := os.MkdirTemp("", "reaper-passstate-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	if out, err := exec.Command("go", "run", "../scripts/mkstate", "-dir", dir, "-users", fmt.Sprint(users), "-clients=false").CombinedOutput(); err != nil {
		b.Fatalf("mkstate: %v\n%s", err, out)
	}
	// A gateway's title is its comm: the name of what it executed.
	gw := filepath.Join(dir, "openclaw-gateway")
	if err := os.Symlink("/bin/sleep", gw); err != nil {
		b.Fatal(err)
	}
	for k := range users {
		uid := 61000 + k
		cmd := exec.Command(gw, "600")
		cmd.Env = []string{"OPENCLAW_STATE_DIR=" + filepath.Join(dir, fmt.Sprintf("u%d", uid), ".openclaw")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}, Setpgid: true}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	pol := policy.Default(policy.Clients{Owners: all.Clients.Owners(), Marks: all.Clients.Marks()})
	collect := func(b *testing.B, discover bool, cache *gather.Cache) int {
		t, err := run.Collect(context.Background(), run.Config{Policy: pol, Clients: all.Clients, Discover: discover, Cache: cache, Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		defer t.Close()
		n := 0
		for _, d := range t.Dirs {
			if d.Err == "" && d.Skipped == "" && filepath.Dir(filepath.Dir(d.Path)) == dir {
				n++
			}
		}
		return n
	}
	for _, mode := range []string{"read", "kept", "none"} {
		b.Run(mode, func(b *testing.B) {
			cache := gather.NewCache()
			if n := collect(b, true, cache); n != users {
				b.Fatalf("the users' state dirs read: %d, want %d", n, users)
			}
			b.ResetTimer()
			for range b.N {
				switch mode {
				case "read":
					collect(b, true, nil)
				case "kept":
					collect(b, true, cache)
				case "none":
					collect(b, false, nil)
				}
			}
			b.StopTimer()
			// Root's own state is read again whenever the host has an
			// orphaned tree of anyone's (it speaks for all); the users'
			// is kept on every pass.
			if _, reused := cache.Counts(); mode == "kept" && reused < uint64(users*b.N) {
				b.Errorf("kept: %d dirs reused over %d passes of %d users: a pass with no candidate of theirs read their state again", reused, b.N, users)
			}
		})
	}
}

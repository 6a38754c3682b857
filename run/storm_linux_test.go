package run

import (
	"context"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
)

// The sampled way, where fork events cannot be had: a shell starting
// about a hundred children a second that live 3 s each is named by its
// pid, as seen by sampling, its rate a lower bound. (The calm parent's
// control is cmd/reaper's TestForkStorm.)
func TestStormSampled(t *testing.T) {
	var mu sync.Mutex
	var said []audit.Storm
	w := &stormWatch{streak: map[stormKey]int{}, now: map[stormKey]*audit.Storm{}, seen: "sampled", about: aboutParent,
		mine: func(uint32) bool { return true },
		say: func(s audit.Storm, over bool) {
			mu.Lock()
			defer mu.Unlock()
			if !over {
				said = append(said, s)
			}
		}}
	w.set(policy.Defaults{StormRate: 30, StormFor: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.sample(ctx)
	c := exec.Command("bash", "-c", "for i in $(seq 600); do sleep 3 & sleep 0.01; done; wait")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		var got *audit.Storm
		for i := range said {
			if said[i].PID == c.Process.Pid {
				got = &said[i]
			}
		}
		mu.Unlock()
		if got != nil {
			if got.Seen != "sampled" || got.Rate < 30 || got.Comm != "bash" {
				t.Errorf("the storm said: %+v, want bash's, sampled, at 30 a second or more", *got)
			}
			t.Logf("%s", got.Line())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sampled storm of pid %d was not said within a minute; said %+v", c.Process.Pid, said)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

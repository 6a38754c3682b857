package view

import (
	"context"
	"os"
	"testing"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
)

// pty is a view of a live pass: a PTY this test opens is listed with the
// test as its master's holder, and not as dead (its master is held by a
// process in no finding). The control: once closed, it is not listed.
func TestPTYs(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx here: %v", err)
	}
	defer ptmx.Close()
	cfg := config(t, client.NewSet())
	cfg.ProcRoot = ""
	held := func() (listed, dead bool) {
		p, err := run.Scan(context.Background(), cfg, policy.ModeScan)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		v := PTYs(p)
		for _, e := range v.PTYs {
			for _, m := range e.Masters {
				if m.PID == os.Getpid() {
					listed, dead = true, dead || e.Dead
				}
			}
		}
		return listed, dead
	}
	if listed, dead := held(); !listed || dead {
		t.Errorf("the test's PTY: listed %v, dead %v; want listed, alive", listed, dead)
	}
	ptmx.Close()
	if listed, _ := held(); listed {
		t.Error("a closed PTY is still listed with the test as its holder")
	}
}

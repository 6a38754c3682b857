package run

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// maxParents bounds the parents a second's count keeps: past it, a new
// parent is not counted (a storm is one parent's, and is counted first).
const maxParents = 1 << 16

// start counts each second's new processes by parent until ctx ends:
// from the kernel's fork events where the watch may subscribe to them
// (root on the host), else by sampling — the host's fork count each
// second, and only when it is past the rate, the table's processes
// younger than a second by parent. It returns how (audit.Storm.Seen).
func (w *stormWatch) start(ctx context.Context) string {
	w.streak, w.now = map[int]int{}, map[int]*audit.Storm{}
	w.about = aboutParent
	if f, err := platform.OpenForks(); err == nil {
		w.seen = "fork events"
		go w.events(ctx, f)
		return w.seen
	}
	w.seen = "sampled"
	go w.sample(ctx)
	return w.seen
}

// events counts the fork events f gives, and hands the counts over
// every second.
func (w *stormWatch) events(ctx context.Context, f *platform.Forks) {
	var mu sync.Mutex
	counts := map[int]int{}
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			err := f.Read(buf, func(parent, _ int) {
				mu.Lock()
				if _, ok := counts[parent]; ok || len(counts) < maxParents {
					counts[parent]++
				}
				mu.Unlock()
			})
			// ENOBUFS: events came faster than they were read, and some
			// are lost (a count low, never high); anything else ends it.
			if err != nil && !platform.Overrun(err) {
				return
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			mu.Lock()
			c := counts
			counts = make(map[int]int, len(c))
			mu.Unlock()
			w.second(c)
		}
	}
}

// sample reads the host's fork count each second, and the table only
// when it rose by the rate or more.
func (w *stormWatch) sample(ctx context.Context) {
	last, err := platform.ForkCount()
	if err != nil {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := platform.ForkCount()
		if err != nil {
			return
		}
		rose := int(n - last)
		last = n
		counts := map[int]int{}
		if rose >= w.rate {
			counts = youngByParent()
			named := false
			for _, c := range counts {
				named = named || c >= w.rate
			}
			if !named {
				counts[-1] = rose // the host's alone: no parent to name
			}
		}
		w.second(counts)
	}
}

// youngByParent counts the processes younger than a second by parent.
func youngByParent() map[int]int {
	out := map[int]int{}
	s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		return out
	}
	defer s.Close()
	for i := range s.Procs {
		p := &s.Procs[i]
		if s.Age(p) < time.Second && len(out) < maxParents {
			out[p.PPID]++
		}
	}
	return out
}

// aboutParent reads a storm's parent alone.
func aboutParent(pid int) (comm, command string, uid uint32, ok bool) {
	p, err := platform.ReadStat(pid)
	if err != nil {
		return "", "", 0, false
	}
	uid, err = platform.ReadUID(pid)
	if err != nil {
		return "", "", 0, false
	}
	argv, _ := platform.ReadCmdline(pid)
	return p.Comm, strings.Join(argv, " "), uid, true
}

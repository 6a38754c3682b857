package run

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// maxParents bounds the parents a second's count keeps: past it, a new
// parent is not counted (a storm is one parent's, and is counted first).
const maxParents = 1 << 16

// start counts each second's new processes by parent until ctx ends:
// from the kernel's fork events where the watch may subscribe to them,
// else by sampling — the namespace's last pid each second, and only when
// it rose past the rate, the table's processes younger than a second by
// parent. It subscribes on a goroutine of its own (a kernel that does
// not answer costs a second or two, not the first pass's).
func (w *stormWatch) start(ctx context.Context) {
	w.streak, w.now = map[int]int{}, map[int]*audit.Storm{}
	w.forked = make(chan struct{}, 1)
	w.about = aboutParent
	go func() {
		f, err := platform.OpenForks()
		if err != nil {
			w.setSeen("sampled")
			w.sample(ctx)
			close(w.forked) // the last pid could not be read: no word of forks
			return
		}
		defer f.Close()
		w.setSeen("fork events")
		w.fork() // what forked before the subscription was not counted
		w.events(ctx, f)
	}()
}

// Reading the fork events: the first after a quiet spell wakes the
// reader, which then reads what came every drainEvery within the second,
// never one wakeup an event; idle, it looks up every idleWait to see
// whether the watch ended.
const (
	drainEvery = 100 * time.Millisecond
	idleWait   = 5 * time.Second
)

// events counts the fork events f gives, and hands the counts over once
// a second while any come (and a second after the last, so that a storm
// is seen to end).
func (w *stormWatch) events(ctx context.Context, f *platform.Forks) {
	buf := make([]byte, 64<<10)
	counts := map[int]int{}
	count := func(parent, _ int) {
		if _, ok := counts[parent]; ok || len(counts) < maxParents {
			counts[parent]++
		}
	}
	second := time.Now() // when the second being counted began
	busy := false        // a second is being counted
	for ctx.Err() == nil {
		wait := idleWait
		if busy {
			wait = max(time.Until(second.Add(time.Second)), 0)
		}
		ready, err := f.Wait(wait)
		if err != nil {
			return
		}
		if ready && !busy {
			second, busy = time.Now(), true
		}
		if ready {
			time.Sleep(min(drainEvery, max(time.Until(second.Add(time.Second)), 0)))
			if f.Drain(buf, count) != nil {
				return
			}
		}
		if busy && time.Since(second) >= time.Second {
			if len(counts) > 0 {
				w.fork()
			}
			w.second(counts)
			busy = len(counts) > 0 || w.active()
			counts = map[int]int{}
			second = second.Add(time.Second)
		}
	}
}

// sample reads the namespace's last pid each second, and the table only
// when it rose by the rate or more (or wrapped).
func (w *stormWatch) sample(ctx context.Context) {
	lp, err := platform.OpenLastPID()
	if err != nil {
		return
	}
	defer lp.Close()
	last, err := lp.Read()
	if err != nil {
		return
	}
	w.fork() // what forked before this first read was not seen
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := lp.Read()
		if err != nil {
			return
		}
		if n != last {
			w.fork()
		}
		rose := n - last
		if rose < 0 {
			rose = math.MaxInt32 // wrapped at pid_max: read the table
		}
		last = n
		counts := map[int]int{}
		if w.overRate(rose) {
			counts = youngByParent()
			named := false
			for _, c := range counts {
				named = named || w.overRate(c)
			}
			if !named && rose != math.MaxInt32 {
				counts[-1] = rose // the namespace's alone: no parent to name
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

// setSeen says how the counts are had.
func (w *stormWatch) setSeen(how string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = how
}

// active reports whether a parent is over the rate now (a streak going).
func (w *stormWatch) active() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.streak) > 0
}

// overRate reports whether n processes in a second reach the rate.
func (w *stormWatch) overRate(n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rate > 0 && n >= w.rate
}

// fork says that something forked (forked), without waiting.
func (w *stormWatch) fork() {
	select {
	case w.forked <- struct{}{}:
	default:
	}
}

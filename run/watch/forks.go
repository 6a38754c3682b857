package watch

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// The keys of a user's count, a user's under an adopter, and the
// namespace's.
func userKey(uid int64) stormKey                 { return stormKey{UID: uid} }
func adoptedKey(adopter int, uid int64) stormKey { return stormKey{UID: uid, Adopter: adopter} }

var hostKey = stormKey{PID: -1, UID: -1}

// maxParents bounds the parents a second's count keeps: past it, a new
// parent is not counted (a storm is one parent's, and is counted first).
const maxParents = 1 << 16

// start counts each second's new processes by parent until ctx ends:
// from the kernel's fork events where the watch may subscribe to them,
// else by sampling — the namespace's last pid each second, and only when
// it rose past the rate, the table's processes younger than a second by
// parent. Where neither can be read (off Linux) no storm is said. It subscribes on a goroutine of its own (a kernel that does
// not answer costs a second or two, not the first pass's).
func (w *stormWatch) start(ctx context.Context) {
	w.streak, w.now = map[stormKey]int{}, map[stormKey]*audit.Storm{}
	w.forked = make(chan struct{}, 1)
	w.about = aboutParent
	go func() {
		f, err := platform.OpenForks()
		if err != nil {
			w.sample(ctx)
			close(w.forked) // the last pid could not be read (or is not, off Linux): no word of forks
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
	counts := map[stormKey]int{}
	users := userReads{}
	count := func(parent, child int) {
		if k := parentKey(parent); counts[k] > 0 || len(counts) < maxParents {
			counts[k]++
		}
		if uid, ok := users.of(child, parent); ok {
			counts[userKey(int64(uid))]++
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
			counts, users = map[stormKey]int{}, userReads{}
			second = second.Add(time.Second)
		}
	}
}

// sample reads the namespace's last pid each second and, only when it
// rose by the rate or more (or wrapped), looks for the processes born
// since (platform.Births: the table's listing against the last, then
// the new pids' stat files alone). A thread moves the last pid too, but
// is no process and never listed: a user's threads cost a listing, no
// table read, and are never a storm.
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
	births, err := platform.NewBirths()
	if err != nil {
		return
	}
	w.setSeen("sampled")
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
			rose = math.MaxInt32 // wrapped at pid_max
		}
		last = n
		counts := map[stormKey]int{}
		if w.overRate(rose) {
			bs, left, err := births.Look(time.Second, maxBirthReads)
			if err == nil {
				counts = w.sampled(bs, left)
			}
		}
		w.second(counts)
	}
}

// maxBirthReads bounds the new processes a sampled second reads: past
// it, they are counted for the namespace, unread.
const maxBirthReads = 4096

// sampled counts a second's births: by the parent that forked them, and
// by their user. A birth under an adopter (PID 1, a systemd manager, the
// init the watch follows) in a session other than the adopter's was not
// forked by it — its parent forked it and exited — and is counted as
// adopted, the user's, never the adopter's. Where no parent and no user
// is over the rate, the births are the namespace's count (processes, not
// pids: threads are not among them).
func (w *stormWatch) sampled(bs []platform.Birth, left int) map[stormKey]int {
	counts := map[stormKey]int{}
	for i := range bs {
		b := &bs[i]
		uid := int64(-1)
		if b.UID != platform.NoUID {
			uid = int64(b.UID)
		}
		if b.Parent != nil && w.adopts(b.Parent) && b.Parent.SID != b.SID {
			if uid >= 0 {
				counts[adoptedKey(b.PPID, uid)]++
			}
		} else if k := parentKey(b.PPID); counts[k] > 0 || len(counts) < maxParents {
			counts[k]++
		}
		if uid >= 0 {
			counts[userKey(uid)]++
		}
	}
	named := false
	for _, c := range counts {
		named = named || w.overRate(c)
	}
	if !named {
		counts[hostKey] = len(bs) + left
	}
	return counts
}

// adopts reports whether p is a process that holds what it did not fork:
// the namespace's init, a systemd manager, the init the watch follows.
func (w *stormWatch) adopts(p *platform.Process) bool {
	return p.PID == 1 || p.PID == w.adopter || p.Comm == "systemd"
}

// userReads reads whose a fork is: its parent's uid (read once a second
// for each parent: a parent forking a thousand times costs one read),
// its child's where the parent is gone already (a chain of links, each
// forking and exiting), at most maxUIDReads a second — so that a storm by
// many parents, or by such a chain, is its user's.
type userReads map[int]uint32

const maxUIDReads = 4096

func (u userReads) of(child, parent int) (uint32, bool) {
	for _, pid := range []int{parent, child} {
		if uid, ok := u[pid]; ok {
			return uid, uid != platform.NoUID
		}
		if len(u) >= maxUIDReads {
			return 0, false
		}
		uid, err := platform.ReadUID(pid)
		if err != nil {
			u[pid] = platform.NoUID
			continue
		}
		u[pid] = uid
		return uid, true
	}
	return 0, false
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

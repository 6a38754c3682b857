package watch

import (
	"sync"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// descendants records the processes that descend from one pid, each by
// its pid and start, by a look at the process table every interval until
// stopped: what reaper run reaps where it cannot adopt them (macOS).
type descendants struct {
	root int
	mu   sync.Mutex
	seen map[int]uint64 // pid → StartTicks
	quit chan struct{}
	done chan struct{}
}

// maxRecorded bounds what one run records: a command's tree of more is
// recorded up to it (the watch or the timer covers the rest).
const maxRecorded = 65536

func recordDescendants(root int, every time.Duration) *descendants {
	d := &descendants{root: root, seen: map[int]uint64{}, quit: make(chan struct{}), done: make(chan struct{})}
	d.look()
	go func() {
		defer close(d.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.quit:
				return
			case <-t.C:
				d.look()
			}
		}
	}()
	return d
}

// look reads the table and records every descendant of the root, by the
// scan's tree (whose walk ends even where a racy read closed a loop).
func (d *descendants) look() {
	read := run.ReadTable
	if read == nil {
		read = platform.ReadSnapshot
	}
	snap, err := read(platform.DefaultProcRoot)
	if err != nil {
		return
	}
	defer snap.Close()
	root := snap.Index(d.root)
	if root < 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	scan.NewTree(snap).Walk(root, func(i, depth int) {
		if p := &snap.Procs[i]; depth > 0 && !p.KernelThread() && len(d.seen) < maxRecorded {
			d.seen[p.PID] = p.StartTicks
		}
	})
}

// stop ends the recording and returns what it recorded.
func (d *descendants) stop() map[int]uint64 {
	close(d.quit)
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen
}
